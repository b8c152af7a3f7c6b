// The landing page: what a browser gets at / (API clients get the JSON 404 there). Links only, no script.
import { html, type Html } from '../html.ts';

export interface HomeView {
  /** SVC_DOCS_URL: where this installation's manual is (null: the page names the README instead). */
  docsUrl: string | null;
}

function item(href: string, label: string, what: Html | string): Html {
  return html`<li><a href="${href}">${label}</a><p>${what}</p></li>`;
}

export function homeBody(v: HomeView): Html {
  const docs = v.docsUrl
    ? item(v.docsUrl, 'Documentation', 'Setting up clients, models, keys, limits and billing.')
    : html`<li><strong>Documentation</strong><p>The manual is <code>README.md</code> in the svc-gateway source tree.</p></li>`;
  return html`<p>An AI gateway with OpenAI- and Anthropic-compatible APIs. Point a client's base URL at <code>/v1</code> (OpenAI SDKs) or <code>/anthropic</code> (Anthropic SDKs, Claude Code) on this address, with an API key.</p>
<nav aria-label="Where to go"><ul class="links">
${item('/dashboard', 'Console', 'Sign in to create and revoke API keys, and to see usage and billing.')}
${item('/status', 'Status', 'Each model’s state, its uptime over 90 days, and incidents.')}
${item('/v1/models', 'Models', html`The models served here, as JSON in OpenAI’s list format (no key needed).`)}
${item('/trust', 'Trust and security', 'What is stored and for how long, subprocessors, encryption, the security contact.')}
${docs}
</ul></nav>`;
}
