/**
 * Runs tasks in parallel under two caps: at most `total` at once, and at most `perKey` at once for
 * any one key (a webhook endpoint), so one slow receiver cannot take every slot. Items wait in a
 * queue per key and are started round-robin across keys. Once `stop()` says so, nothing new starts;
 * the items never started are returned so the caller can hand them back.
 *
 * @example
 * const unstarted = await runPooled(deliveries, (d) => d.endpoint_id, send, { total: 6, perKey: 3, stop: () => clock() >= deadline });
 */
export async function runPooled<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  task: (item: T) => Promise<void>,
  { total, perKey, stop = () => false }: { total: number; perKey: number; stop?: () => boolean },
): Promise<T[]> {
  if (!(total >= 1 && perKey >= 1)) throw new Error("total and perKey must be at least 1");
  const queues = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const queue = queues.get(key);
    if (queue) queue.push(item);
    else queues.set(key, [item]);
  }
  const active = new Map<string, number>();
  const running = new Set<Promise<void>>();

  const startNext = (): boolean => {
    for (const [key, queue] of queues) {
      if ((active.get(key) ?? 0) >= perKey) continue;
      const item = queue.shift()!;
      queues.delete(key);
      if (queue.length > 0) queues.set(key, queue); // to the back: keys take turns
      active.set(key, (active.get(key) ?? 0) + 1);
      const run: Promise<void> = task(item)
        .catch(() => undefined)
        .finally(() => {
          active.set(key, active.get(key)! - 1);
          running.delete(run);
        });
      running.add(run);
      return true;
    }
    return false;
  };

  while (queues.size > 0 || running.size > 0) {
    while (queues.size > 0 && running.size < total && !stop() && startNext());
    if (stop()) break;
    if (running.size === 0) break;
    await Promise.race(running);
  }
  await Promise.all(running);
  return [...queues.values()].flat();
}
