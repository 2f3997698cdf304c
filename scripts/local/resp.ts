import { connect as netConnect, type Socket } from "node:net";

export type RespValue = string | number | null | RespValue[] | RespError;

/** An error reply from Redis (`-ERR ...`), kept as a value so pipelines can carry it. */
export class RespError {
  constructor(readonly message: string) {}
}

/**
 * A minimal RESP2 client: commands are written as arrays of bulk strings and replies are read in
 * order, so several commands can be in flight on one connection.
 */
export class RespConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly waiting: { resolve: (v: RespValue) => void; reject: (e: Error) => void }[] = [];
  private closedWith: Error | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk) => this.receive(chunk));
    const fail = (error: Error) => {
      this.closedWith = error;
      for (const pending of this.waiting.splice(0)) pending.reject(error);
    };
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("redis connection closed")));
  }

  static open(url: string): Promise<RespConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = netConnect({ host: hostname || "127.0.0.1", port: Number(port || 6379) }, () => {
        socket.off("error", reject);
        socket.setNoDelay(true);
        resolve(new RespConnection(socket));
      });
      socket.once("error", reject);
    });
  }

  get usable(): boolean {
    return this.closedWith === null;
  }

  send(command: (string | number)[]): Promise<RespValue> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const parts = [`*${command.length}\r\n`];
    for (const arg of command) {
      const text = String(arg);
      parts.push(`$${Buffer.byteLength(text)}\r\n${text}\r\n`);
    }
    this.socket.write(parts.join(""));
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  close(): void {
    this.socket.end();
  }

  private receive(chunk: Buffer) {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      const parsed = parseReply(this.buffer, 0);
      if (!parsed) return;
      this.buffer = this.buffer.subarray(parsed.end);
      this.waiting.shift()?.resolve(parsed.value);
    }
  }
}

function parseReply(buf: Buffer, start: number): { value: RespValue; end: number } | null {
  const lineEnd = buf.indexOf("\r\n", start);
  if (lineEnd < 0) return null;
  const type = String.fromCharCode(buf[start]);
  const line = buf.toString("utf8", start + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case "+":
      return { value: line, end: next };
    case "-":
      return { value: new RespError(line), end: next };
    case ":":
      return { value: Number(line), end: next };
    case "$": {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buf.length < next + length + 2) return null;
      return { value: buf.toString("utf8", next, next + length), end: next + length + 2 };
    }
    case "*": {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let cursor = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, cursor);
        if (!item) return null;
        items.push(item.value);
        cursor = item.end;
      }
      return { value: items, end: cursor };
    }
    default:
      throw new Error(`unexpected RESP type ${type}`);
  }
}
