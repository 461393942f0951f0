/**
 * Random identifiers, L1-looking addresses and short codes.
 *
 * - Ids: 27 characters of base62 (`0-9A-Za-z`), like the real service's ids (OpenAPI examples
 *   such as `1dnfLZolYD72zasqtmtTXXoaNNJ`). Uniformly random (rejection sampling), about 160 bits.
 * - Addresses: BTC(-TESTNET) bech32-looking `bc1q…`/`tb1q…` (38 data characters), ETH(-TESTNET)
 *   `0x` + 40 hex digits. They look like L1 addresses; nothing is ever sent to a chain.
 * - Short codes: three distinct words of {@link SHORT_CODE_WORDS}, separated by single spaces
 *   (spec section 2, "Wallet identifiers").
 */
import { randomBytes, randomInt } from 'node:crypto';
import { SHORT_CODE_WORDS } from './words';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

/** Random string over `alphabet` (length <= 256), unbiased. */
function randomString(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < limit) out += alphabet[b % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A new 27-character base62 id (companies, funds, wallets, custody groups, transactions, actions, core clients, users). */
export function newId(): string {
  return randomString(BASE62, 27);
}

/** A new 64-hex-digit hash that stands in for a chain transaction id (`chainTxID`). */
export function newChainTxId(): string {
  return randomBytes(32).toString('hex');
}

/**
 * A new L1-looking deposit address for an asset code.
 * @returns `{address, address_type}`: `tb1q…`/`bc1q…` with type `P2WPKH` for BTC assets,
 *   `0x…` with type `EOA` for ETH assets.
 */
export function newAddress(asset: string): { address: string; address_type: string } {
  if (asset.startsWith('ETH')) return { address: '0x' + randomBytes(20).toString('hex'), address_type: 'EOA' };
  const hrp = asset === 'BTC' ? 'bc' : 'tb';
  return { address: `${hrp}1q${randomString(BECH32, 38)}`, address_type: 'P2WPKH' };
}

/**
 * A new short code: three distinct words separated by spaces, not in `taken`.
 * @throws {Error} after 1000 collisions (the word list gives about 41 million codes).
 */
export function newShortCode(taken: (code: string) => boolean): string {
  for (let i = 0; i < 1000; i++) {
    const words: string[] = [];
    while (words.length < 3) {
      const w = SHORT_CODE_WORDS[randomInt(SHORT_CODE_WORDS.length)];
      if (!words.includes(w)) words.push(w);
    }
    const code = words.join(' ');
    if (!taken(code)) return code;
  }
  throw new Error('short code space exhausted');
}

/** Normalise a short code as a client may send it: trimmed, lower case, single spaces (`+` counts as a space). */
export function normaliseShortCode(text: string): string {
  return text.replace(/\+/g, ' ').trim().toLowerCase().split(/\s+/).join(' ');
}
