// The generated reference pages, by path from the repository root: what `npm run docs:gen` writes and what the
// staleness test compares with the committed files.
import { crdsPage } from './crds.ts';
import { errorsPage } from './errors.ts';
import { metricsPage } from './metrics.ts';
import { settingsPage } from './settings.ts';

export async function referencePages(root: string): Promise<Map<string, string>> {
  return new Map([
    ['docs/reference/crds.md', crdsPage()],
    ['docs/reference/errors.md', errorsPage()],
    ['docs/reference/settings.md', await settingsPage(root)],
    ['docs/reference/metrics.md', metricsPage(root)],
  ]);
}
