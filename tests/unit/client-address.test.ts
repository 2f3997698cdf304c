/**
 * The budget a per-address rate limit counts a request against (shared/edge/rate-limit.ts,
 * addressBudget; docs/decisions.md, D-600): an IPv4 address itself, an IPv6 address by its /64,
 * however it is written.
 */
import { describe, expect, it } from "vitest";
import { addressBudget } from "../../shared/edge/rate-limit";

describe("addressBudget", () => {
  it("keeps an IPv4 address whole, also when written as IPv4-mapped IPv6", () => {
    expect(addressBudget("203.0.113.7")).toBe("ip:203.0.113.7");
    expect(addressBudget("::ffff:203.0.113.7")).toBe("ip:203.0.113.7");
    expect(addressBudget("203.0.113.8")).not.toBe(addressBudget("203.0.113.7"));
  });

  it("counts every address of one IPv6 /64 together, and other /64s apart, however written", () => {
    const one = addressBudget("2001:db8:aa:1::1");
    expect(one).toBe("ip6:2001:db8:aa:1::/64");
    for (const sameNetwork of [
      "2001:0db8:00aa:0001:8f3:0:0:42",
      "2001:DB8:AA:1:FFFF:FFFF:FFFF:FFFF",
      "[2001:db8:aa:1::9]",
      "2001:db8:aa:1::9%eth0",
    ]) {
      expect(addressBudget(sameNetwork), sameNetwork).toBe(one);
    }
    expect(addressBudget("2001:db8:aa:2::1")).toBe("ip6:2001:db8:aa:2::/64");
    expect(addressBudget("2001:db8::1")).toBe("ip6:2001:db8:0:0::/64");
    expect(addressBudget("::1")).toBe("ip6:0:0:0:0::/64");
  });

  it("leaves what is no address as it came (its own budget), and no address at all as the one shared budget", () => {
    expect(addressBudget("2001:db8::1::2")).toBe("ip:2001:db8::1::2");
    expect(addressBudget("1:2:3")).toBe("ip:1:2:3");
    expect(addressBudget("unknown")).toBe("ip:unknown");
  });
});
