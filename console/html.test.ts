import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from './html.ts';

describe('html', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    [`"a" & 'b'`, '&quot;a&quot; &amp; &#39;b&#39;'],
    ['plain', 'plain'],
  ])('escapes %s', (input, out) => {
    expect(escapeHtml(input)).toBe(out);
    expect(html`<td>${input}</td>`.value).toBe(`<td>${out}</td>`);
  });

  it('passes nested fragments and arrays through, drops null, undefined and false', () => {
    const rows = ['<a>', 'b'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${rows}${null}${undefined}${false}${0}</ul>`.value).toBe('<ul><li>&lt;a&gt;</li><li>b</li>0</ul>');
  });
});
