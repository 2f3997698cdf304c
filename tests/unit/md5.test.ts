import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { md5 } from "../../shared/kernel/db/md5";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("md5 (the wire client's, for PostgreSQL's MD5 password method)", () => {
  it("answers RFC 1321's test suite", () => {
    const suite: [string, string][] = [
      ["", "d41d8cd98f00b204e9800998ecf8427e"],
      ["a", "0cc175b9c0f1b6a831c399e269772661"],
      ["abc", "900150983cd24fb0d6963f7d28e17f72"],
      ["message digest", "f96b697d7cb7938d525a2f31aaf161d0"],
      ["abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"],
      ["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"],
      ["12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"],
    ];
    for (const [text, digest] of suite) expect(hex(md5(new TextEncoder().encode(text))), text).toBe(digest);
  });

  it("agrees with Node's MD5 at every length around the block and padding boundaries, and on longer inputs", () => {
    for (let length = 0; length <= 200; length++) {
      const bytes = randomBytes(length);
      expect(hex(md5(bytes)), `${length} bytes`).toBe(createHash("md5").update(bytes).digest("hex"));
    }
    const long = randomBytes(100_003);
    expect(hex(md5(long))).toBe(createHash("md5").update(long).digest("hex"));
  });
});
