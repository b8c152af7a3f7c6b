// The public status page: the overall state, open incidents first, one row per model (state, last probe, latency,
// 90 daily bars, 24 h / 7 d / 30 d / 90 d uptime), the rules behind them, then the incident history. Readable without
// script; status.js reloads it every REFRESH_SECONDS while the reader leaves the Refresh box ticked.
import { describeState } from '../../gateway/availability/incidents.ts';
import { STATE_RULES, UPTIME_RULE } from '../../gateway/availability/states.ts';
import type { Incident, State } from '../../gateway/availability/types.ts';
import { percent, type DayBar } from '../../gateway/availability/uptime.ts';
import type { ModelView, StatusView } from '../../gateway/availability/view.ts';
import { html, type Html } from '../html.ts';
import { overall } from '../status/statuspage.ts';
import { scrollTable, utc } from './layout.ts';

export const REFRESH_SECONDS = 60;

const LABEL: Record<State, string> = {
  operational: 'Operational',
  degraded_performance: 'Degraded performance',
  partial_outage: 'Partial outage',
  major_outage: 'Major outage',
  under_maintenance: 'Under maintenance',
};

function stateBadge(s: State): Html {
  return html`<span class="avail ${s}">${LABEL[s]}</span>`;
}

function barClass(b: DayBar): string {
  if (b.uptime === null) return 'nodata';
  if (b.worst === 'major_outage' && b.uptime < 0.99) return 'major_outage';
  if (b.uptime < 1) return 'partial_outage';
  return b.worst === 'degraded_performance' ? 'degraded_performance' : 'operational';
}

const W = 540;
const BAR_H = 34;

function bars(m: ModelView): Html {
  const step = W / m.bars.length;
  const rects = m.bars.map(
    (b, i) =>
      html`<rect class="day ${barClass(b)}" x="${(i * step).toFixed(1)}" y="0" width="${(step * 0.75).toFixed(1)}" height="${BAR_H}"><title>${b.day}: ${b.uptime === null ? 'no data' : `${percent(b.uptime)} uptime`}${b.worst && b.worst !== 'operational' ? `, worst: ${describeState(b.worst)}` : ''}</title></rect>`,
  );
  const first = m.bars[0]?.day ?? '';
  return html`<svg class="bars" viewBox="0 0 ${W} ${BAR_H}" role="img" aria-labelledby="bars-${m.id}"><title id="bars-${m.id}">Daily uptime of ${m.id}, ${m.bars.length} days from ${first} to today (UTC)</title>${rects}</svg>`;
}

function incidentBlock(i: Incident): Html {
  return html`<article class="card incident ${i.status}" id="incident-${i.id}" aria-labelledby="incident-${i.id}-title">
<h3 id="incident-${i.id}-title">${i.title}</h3>
<p class="meta">${i.status === 'resolved' ? 'Resolved' : 'Open'} · impact ${i.impact} · ${i.source === 'probe' ? 'opened by the probes' : 'declared'} · models: ${i.models.join(', ')}</p>
<ol class="updates">${[...i.updates].reverse().map((u) => html`<li><strong>${u.status}</strong> <time datetime="${new Date(u.at).toISOString()}">${utc(u.at)}</time> — ${u.message}</li>`)}</ol>
</article>`;
}

function modelRow(m: ModelView): Html {
  return html`<tr>
<th scope="row">${m.id}<br><span class="hint">${m.type === 'mcp' ? 'MCP server' : `${m.type}, ${m.targets.length} target${m.targets.length === 1 ? '' : 's'}`}</span></th>
<td>${stateBadge(m.state)}</td>
<td>${m.lastProbe === null ? 'not yet' : html`<time datetime="${new Date(m.lastProbe).toISOString()}">${utc(m.lastProbe)}</time>`}</td>
<td>${m.latencyMs === null ? '—' : `${m.latencyMs} ms`}</td>
<td>${bars(m)}</td>
<td>${percent(m.windows.h24)}</td><td>${percent(m.windows.d7)}</td><td>${percent(m.windows.d30)}</td><td>${percent(m.windows.d90)}</td>
</tr>`;
}

function targetRows(v: StatusView): Html {
  return html`<details><summary>Targets</summary>${scrollTable(
    'targets-caption',
    'Every target of every model',
    html`<thead><tr><th scope="col">Model</th><th scope="col">Target</th><th scope="col">State</th><th scope="col">Last probe</th><th scope="col">Latency</th><th scope="col">Message</th></tr></thead>
<tbody>${v.models.flatMap((m) => m.targets.map((t) => html`<tr><td>${m.id}</td><td>${t.target}</td><td>${stateBadge(t.state)}</td><td>${utc(t.lastProbe)}</td><td>${t.latencyMs === null ? '—' : `${t.latencyMs} ms`}</td><td>${t.message}</td></tr>`))}</tbody>`,
  )}</details>`;
}

export function statusBody(v: StatusView): Html {
  const o = overall(v);
  const open = v.incidents.filter((i) => i.status !== 'resolved');
  const past = v.incidents.filter((i) => i.status === 'resolved');
  return html`<p class="overall ${o.indicator}" role="status">${o.description}</p>
<p class="hint">Data as of <time datetime="${new Date(v.asOf).toISOString()}">${utc(v.asOf)}</time>. Every target is probed every ${v.intervalSeconds} s (unless its ModelRoute says otherwise) and judged with the live traffic of the last 5 minutes. Machine-readable: <a href="/status/api/v2/summary.json">summary.json</a> (Statuspage API v2).</p>
<p class="inline"><input type="checkbox" id="auto-refresh" data-refresh="${REFRESH_SECONDS}" checked><label for="auto-refresh">Refresh this page every ${REFRESH_SECONDS} s</label></p>
${open.length > 0 ? html`<section aria-labelledby="open-h"><h2 id="open-h">Open incidents</h2>${open.map(incidentBlock)}</section>` : ''}
<section aria-labelledby="models-h"><h2 id="models-h">Models</h2>
${scrollTable(
  'models-caption',
  'Current state and uptime of each model',
  html`<thead><tr><th scope="col">Model</th><th scope="col">State</th><th scope="col">Last probe</th><th scope="col">Latency</th><th scope="col">Last 90 days</th><th scope="col">24 h</th><th scope="col">7 d</th><th scope="col">30 d</th><th scope="col">90 d</th></tr></thead>
<tbody>${v.models.map(modelRow)}</tbody>`,
  'status',
)}
${targetRows(v)}
</section>
<section aria-labelledby="rules-h"><h2 id="rules-h">How states and uptime are decided</h2>
<ul>${STATE_RULES.map((r) => html`<li>${r}</li>`)}<li>${UPTIME_RULE}</li><li>Probes are minimal real calls (one short message, max_tokens 1) billed to no account; an MCP server's (listed as mcp:&lt;name&gt;) is initialize and ping, its session closed after; an incident opens when a model leaves operational for two probe rounds in a row and resolves after two good rounds.</li></ul>
</section>
<section aria-labelledby="history-h"><h2 id="history-h">Incident history (90 days)</h2>
${past.length === 0 ? html`<p>No incidents in the last 90 days.</p>` : past.map(incidentBlock)}
</section>`;
}
