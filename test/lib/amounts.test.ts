/** Base units <-> decimal strings (spec section 2, Asset.scale), exact with bigint. */
import assert from 'node:assert/strict';
import { toBaseUnits, fromBaseUnits, decimalsOfScale, toSafeNumber } from '../../lib/api/amounts';
import { ValidationError } from '../../lib/api/errors';

describe('amounts', () => {
  it('converts decimal strings to base units exactly with the asset scale', () => {
    assert.equal(toBaseUnits('0.015', 100000000), 1500000n);
    assert.equal(toBaseUnits('1', 1000000000), 1000000000n);
    assert.equal(toBaseUnits('.5', 100000000), 50000000n);
    assert.equal(toBaseUnits('20999999.99999999', 100000000), 2099999999999999n);
    assert.equal(toBaseUnits('0.000000001', 1000000000), 1n);
    assert.equal(toBaseUnits('1.10000000000', 100000000), 110000000n, 'trailing zeros beyond the scale are exact');
  });

  it('refuses a value that does not convert exactly, naming the field', () => {
    assert.throws(
      () => toBaseUnits('0.000000001', 100000000, 'send.amount'),
      (e: Error) => e instanceof ValidationError && e.field === 'send.amount' && /at most 8 decimal places/.test(e.message),
    );
    assert.throws(
      () => toBaseUnits('0.0000000010', 100000000, 'send.amount', 'BTC-TESTNET'),
      (e: Error) => e instanceof ValidationError && e.message === 'send.amount: at most 8 decimal places for BTC-TESTNET, got 0.0000000010 (9 places); amounts are never rounded',
      'with the asset: named, and its decimals',
    );
    for (const bad of ['', '1e-8', '1,5', ' 1. ', 'abc', '0x10', '--1']) {
      assert.throws(() => toBaseUnits(bad, 100000000), ValidationError, bad);
    }
  });

  it('formats base units as decimal strings', () => {
    assert.equal(fromBaseUnits(1500000n, 100000000), '0.015');
    assert.equal(fromBaseUnits(500000000, 100000000), '5');
    assert.equal(fromBaseUnits('20000000001', 1000000000), '20.000000001');
    assert.equal(fromBaseUnits(0, 100000000), '0');
    assert.throws(() => fromBaseUnits(1.5, 100000000), ValidationError);
  });

  it('round-trips every base unit value it is given', () => {
    for (const v of [0n, 1n, 9n, 10n, 99999999n, 100000000n, 123456789012345n, 9007199254740991n]) {
      for (const scale of [100000000, 1000000000, 1]) assert.equal(toBaseUnits(fromBaseUnits(v, scale), scale), v);
    }
  });

  it('knows the decimals of a scale and refuses a scale that is not a power of ten', () => {
    assert.equal(decimalsOfScale(100000000), 8);
    assert.equal(decimalsOfScale(1000000000), 9);
    assert.throws(() => decimalsOfScale(250), ValidationError);
  });

  it('refuses base units a JSON number cannot carry exactly', () => {
    assert.equal(toSafeNumber(9007199254740991n), Number.MAX_SAFE_INTEGER);
    assert.throws(() => toSafeNumber(9007199254740992n, 'send.amount'), /send.amount/);
  });
});
