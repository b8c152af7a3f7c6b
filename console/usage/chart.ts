// Spend per day as an SVG bar chart drawn on the server (no script, no CDN), with a text alternative.
import { html, type Html } from '../html.ts';
import { usdText } from '../pages/money.ts';

const W = 720;
const H = 180;
const PAD = 28;

export function spendChart(days: Array<{ day: string; costNano: number }>): Html {
  const max = Math.max(1, ...days.map((d) => d.costNano));
  const step = (W - PAD * 2) / Math.max(1, days.length);
  const bar = Math.max(1, step * 0.8);
  const bars = days.map((d, i) => {
    const h = Math.round(((H - PAD * 2) * d.costNano) / max);
    const x = (PAD + i * step).toFixed(1);
    const y = H - PAD - h;
    return html`<rect class="bar" x="${x}" y="${y}" width="${bar.toFixed(1)}" height="${h}"><title>${d.day}: ${usdText(d.costNano)}</title></rect>`;
  });
  const first = days[0]?.day ?? '';
  const last = days.at(-1)?.day ?? '';
  const total = days.reduce((s, d) => s + d.costNano, 0);
  return html`<figure class="chart">
<svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title">
<title id="chart-title">Spend per day (UTC), ${first} to ${last}: ${usdText(total)} in total, at most ${usdText(max === 1 ? 0 : max)} a day</title>
<line class="axis" x1="${PAD}" y1="${H - PAD}" x2="${W - PAD}" y2="${H - PAD}"></line>
${bars}
<text x="${PAD}" y="${H - 8}">${first}</text><text x="${W - PAD}" y="${H - 8}" text-anchor="end">${last}</text>
<text x="${PAD}" y="16">${usdText(max === 1 ? 0 : max)}</text>
</svg>
<figcaption>Spend per day (UTC)</figcaption>
</figure>`;
}
