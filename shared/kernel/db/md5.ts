/**
 * MD5 (RFC 1321), for PostgreSQL's MD5 password method only (shared/kernel/db/wire.ts): a server or
 * pooler configured with `md5` asks for md5(md5(password + user) + salt). WebCrypto has no MD5 in
 * Node (workerd's has), so the wire client carries this one and runs the same code in both runtimes,
 * the one its tests run. Not for anything else: MD5 is broken as a hash.
 */

/** The per-step left rotations (RFC 1321, 3.4). */
const SHIFTS = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
/** floor(2^32 × |sin(i + 1)|), i = 0 … 63 (RFC 1321, 3.4). */
const SINES = Array.from({ length: 64 }, (_, i) => Math.floor(2 ** 32 * Math.abs(Math.sin(i + 1))) >>> 0);

/** The 16-byte MD5 digest of `bytes`. */
export function md5(bytes: Uint8Array): Uint8Array {
  // Padding: a 1 bit, zeros to 56 bytes modulo 64, then the length in bits, 64-bit little-endian.
  const blocks = Math.ceil((bytes.length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, (bytes.length * 8) >>> 0, true);
  view.setUint32(padded.length - 4, Math.floor(bytes.length / 0x20000000), true);

  let a0 = 0x67452301;
  let b0 = 0xefcdab89;
  let c0 = 0x98badcfe;
  let d0 = 0x10325476;
  const words = new Uint32Array(16);
  for (let block = 0; block < blocks; block++) {
    for (let i = 0; i < 16; i++) words[i] = view.getUint32(block * 64 + i * 4, true);
    let a = a0;
    let b = b0;
    let c = c0;
    let d = d0;
    for (let i = 0; i < 64; i++) {
      const round = i >> 4;
      let f: number;
      let g: number;
      if (round === 0) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (round === 1) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) & 15;
      } else if (round === 2) {
        f = b ^ c ^ d;
        g = (3 * i + 5) & 15;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) & 15;
      }
      const sum = (a + f + SINES[i] + words[g]) >>> 0;
      const shift = SHIFTS[(round << 2) | (i & 3)];
      a = d;
      d = c;
      c = b;
      b = (b + ((sum << shift) | (sum >>> (32 - shift)))) >>> 0;
    }
    a0 = (a0 + a) >>> 0;
    b0 = (b0 + b) >>> 0;
    c0 = (c0 + c) >>> 0;
    d0 = (d0 + d) >>> 0;
  }
  const digest = new Uint8Array(16);
  const out = new DataView(digest.buffer);
  for (const [i, word] of [a0, b0, c0, d0].entries()) out.setUint32(i * 4, word, true);
  return digest;
}
