import { startRedisRestBridge } from "./local/redis-rest-bridge";

const token = process.env.UPSTASH_REDIS_REST_TOKEN;
if (!token) {
  console.error("UPSTASH_REDIS_REST_TOKEN must be set: the bridge requires it as the bearer token");
  process.exit(2);
}
const bridge = await startRedisRestBridge({
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  token,
  port: Number(process.env.BRIDGE_PORT ?? 8079),
});
console.log(`ready ${bridge.url}`);
