import { describe, expect, it } from "vitest";
import { egressRefusal, isNonPublicHost } from "../../shared/kernel/egress";

const hostOf = (url: string) => new URL(url).hostname;

describe("egress: what a worker may fetch when a caller names the URL", () => {
  it("knows loopback, private, link-local, shared and reserved addresses, in every spelling URL accepts", () => {
    for (const url of [
      "https://localhost/x",
      "https://api.localhost./x",
      "https://127.0.0.1/x",
      "https://2130706433/x",
      "https://0x7f.1/x",
      "https://0.0.0.0/x",
      "https://10.1.2.3/x",
      "https://100.64.0.1/x",
      "https://169.254.169.254/x",
      "https://172.16.0.1/x",
      "https://172.31.255.255/x",
      "https://192.168.1.1/x",
      "https://198.18.0.1/x",
      "https://224.0.0.1/x",
      "https://255.255.255.255/x",
      "https://[::1]/x",
      "https://[::]/x",
      "https://[::ffff:127.0.0.1]/x",
      "https://[::ffff:10.0.0.1]/x",
      "https://[fd00::1]/x",
      "https://[fe80::1]/x",
      "https://[ff02::1]/x",
    ]) {
      expect({ url, refused: isNonPublicHost(hostOf(url)) }).toEqual({ url, refused: true });
    }
    for (const url of [
      "https://agent.example.com/x",
      "https://8.8.8.8/x",
      "https://172.32.0.1/x",
      "https://100.128.0.1/x",
      "https://[2606:4700::1111]/x",
      "https://[::ffff:8.8.8.8]/x",
      "https://localhost.example.com/x",
    ]) {
      expect({ url, refused: isNonPublicHost(hostOf(url)) }).toEqual({ url, refused: false });
    }
  });

  it("lets through the deployment's own backends, and loopback only where allowed", () => {
    const policy = { configuredOrigins: new Set(["http://127.0.0.1:7000"]), allowLoopback: false };
    expect(egressRefusal(new URL("http://127.0.0.1:7000/limits"), policy)).toBeNull();
    expect(egressRefusal(new URL("https://127.0.0.1:7001/doc.json"), policy)).toMatch(/not on the public Internet/);
    expect(egressRefusal(new URL("https://127.0.0.1:7001/doc.json"), { ...policy, allowLoopback: true })).toBeNull();
    expect(egressRefusal(new URL("https://10.0.0.1/doc.json"), { ...policy, allowLoopback: true })).toMatch(/10\.0\.0\.1/);
    expect(egressRefusal(new URL("https://agent.example.com/doc.json"), policy)).toBeNull();
  });
});
