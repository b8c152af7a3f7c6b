import { describe, expect, it } from 'vitest';
import { centsOf } from '../../billing/statements/statement.ts';
import { usd, usdExactText, usdText } from './money.ts';

const NANO = 1_000_000_000;

describe('money on pages', () => {
  it.each([
    ['zero', 0, '$0.00', '$0.000000000'],
    ['1 nano-USD', 1, '$0.000000001', '$0.000000001'],
    ['the usage cards of the issue', 12_636, '$0.00001263', '$0.000012636'],
    ['a sub-cent spend with trailing zeros', 5_000, '$0.000005', '$0.000005000'],
    ['just below half a cent: cut, never rounded up to look like a cent', 4_999_900, '$0.004999', '$0.004999900'],
    ['half a cent: the statement rounds half away from zero', 5_000_000, '$0.01', '$0.005000000'],
    ['the balance of the issue', 10_999_987_364, '$11.00', '$10.999987364'],
    ['a cent and a bit', 12_345_678, '$0.01', '$0.012345678'],
    ['a million dollars', 1_000_000 * NANO, '$1,000,000.00', '$1000000.000000000'],
    ['a negative balance', -5_500_000_000, '−$5.50', '−$5.500000000'],
    ['a negative balance rounding half away from zero', -1_005_000_000, '−$1.01', '−$1.005000000'],
    ['a tiny negative balance', -3, '−$0.000000003', '−$0.000000003'],
    ['a negative just below half a cent', -4_999_999, '−$0.004999', '−$0.004999999'],
  ])('%s: %i nano-USD shows %s, exactly %s', (_what, nano, text, exact) => {
    expect(usdText(nano)).toBe(text);
    expect(usdExactText(nano)).toBe(exact);
  });

  it('shows to the cent exactly what the statement rounds to (the same rule, from the same function)', () => {
    for (const nano of [5_000_000, 14_999_999, 15_000_000, 10_999_987_364, -1_005_000_000, 123_456_789_000_000]) {
      const cents = centsOf(nano);
      expect(Number(usdText(nano).replace('−', '-').replace(/[$,]/g, ''))).toBe(cents / 100);
    }
  });

  it('puts the exact figure in the value and the tooltip, escaped markup', () => {
    expect(usd(10_999_987_364).value).toBe('<data class="usd" value="10.999987364" title="Exactly $10.999987364">$11.00</data>');
    expect(usd(-5).value).toBe('<data class="usd" value="-0.000000005" title="Exactly −$0.000000005">−$0.000000005</data>');
  });

  it('refuses what is not an integer of nano-USD', () => {
    expect(() => usdText(0.5)).toThrow(RangeError);
    expect(() => usdText(Number.NaN)).toThrow(RangeError);
  });
});
