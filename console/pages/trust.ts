// /trust (public): what is stored and for how long, the subprocessors, encryption in transit and at rest, the security
// contact and certifications, all from the running config (console/trust/facts.ts).
import { html, type Html } from '../html.ts';
import { scrollTable } from './layout.ts';
import type { TrustFacts } from '../trust/facts.ts';

export function trustBody(f: TrustFacts): Html {
  return html`<p class="hint">Generated from this installation's running configuration, not written by hand.</p>
<section aria-labelledby="stored-h"><h2 id="stored-h">What is stored</h2>
<ul>${f.stored.map((s) => html`<li>${s}</li>`)}</ul>
<h3>Never stored</h3><ul>${f.neverStored.map((s) => html`<li>${s}</li>`)}</ul></section>
<section aria-labelledby="retention-h"><h2 id="retention-h">Where, and for how long</h2>
${scrollTable(
  'retention-caption',
  'Retention',
  html`<thead><tr><th scope="col">What</th><th scope="col">Where</th><th scope="col">How long</th></tr></thead>
<tbody>${f.retention.map((r) => html`<tr><td>${r.what}</td><td>${r.where}</td><td>${r.howLong}</td></tr>`)}</tbody>`,
)}</section>
<section aria-labelledby="sub-h"><h2 id="sub-h">Subprocessors</h2>
<p>The upstream model providers this installation sends prompts to, from its ModelRoutes.</p>
${scrollTable(
  'subprocessors-caption',
  'Upstream providers and hosts',
  html`<thead><tr><th scope="col">Provider</th><th scope="col">Host</th><th scope="col">Transport</th><th scope="col">Models</th></tr></thead>
<tbody>${f.subprocessors.map((s) => html`<tr><td>${s.provider}</td><td>${s.host}</td><td>${s.transport}</td><td>${s.models.join(', ')}</td></tr>`)}</tbody>`,
)}</section>
<section aria-labelledby="enc-h"><h2 id="enc-h">Encryption</h2>
${scrollTable(
  'transit-caption',
  'In transit',
  html`<thead><tr><th scope="col">Link</th><th scope="col">Encryption</th></tr></thead>
<tbody>${f.inTransit.map((t) => html`<tr><td>${t.link}</td><td>${t.state}</td></tr>`)}</tbody>`,
)}
<h3>At rest</h3><ul>${f.atRest.map((s) => html`<li>${s}</li>`)}</ul></section>
<section aria-labelledby="contact-h"><h2 id="contact-h">Security contact</h2>
${f.contact.length === 0 ? html`<p>Not configured (SVC_SECURITY_CONTACT).</p>` : html`<ul>${f.contact.map((c) => html`<li><a href="${c}">${c.replace(/^mailto:/, '')}</a></li>`)}</ul>`}
${f.policy ? html`<p>Disclosure policy: <a href="${f.policy}">${f.policy}</a></p>` : ''}
<p>Machine-readable: <a href="/.well-known/security.txt">/.well-known/security.txt</a> (RFC 9116).</p></section>
<section aria-labelledby="cert-h"><h2 id="cert-h">Certifications</h2><p>${f.certifications}</p></section>`;
}
