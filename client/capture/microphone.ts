/**
 * The microphone on the capture clock. Where the browser hands over the audio track's own data
 * (`MediaStreamTrackProcessor`: Chromium), each chunk carries the capture time of its first sample
 * on the browser's clock, as the camera's frames do, and the page ties that clock to
 * `performance.now()` by the chunk read soonest after its capture (D-780). Elsewhere an AudioWorklet
 * (client/capture/audio-worklet.ts) hands over blocks of samples with the audio clock's frame
 * number, and the input side ties the audio clock to `performance.now()`: a frame was rendered no
 * later than the page reads the clock past it, and it reached the microphone the track's input
 * latency before that (D-389, D-770). The output side (`getOutputTimestamp()`) is no measure of
 * either: it adds the output latency, which a Bluetooth headset makes 150 ms or more, to every
 * sample. The blocks of a recording are timed together when it ends (`blockTimes`).
 */

export interface MicrophoneBlock {
  samples: Float32Array;
  /** performance.now() when the page received the block, ms. */
  receivedMs: number;
  /** The block's first sample on the source's own clock, ms. */
  clockMs: number;
  /** The source's clock when the page received the block, ms: no earlier than the block's last sample. */
  readMs: number;
}

/** How the source's clock relates to the capture: whether it stops counting when samples are lost. */
export type MicrophoneClock = "capture" | "audio-context";

/**
 * Where each block's first sample falls on the capture clock, seconds, for the blocks of one
 * recording in the order they came. Each block's `receivedMs - readMs` is the offset of the two
 * clocks plus a delay of zero or more (a read of the source's clock comes no earlier than the
 * samples it reports).
 *
 * - `capture`: the source's clock is the capture's (the track's own timestamps): the offset is
 *   constant, and the smallest seen (over the recording and `seenOffsetMs`, the smallest since the
 *   microphone opened) is the best bound for every block; samples lost or held back only add delay.
 * - `audio-context`: the audio clock counts the samples it renders. When the audio thread misses its
 *   turns, the samples of that stretch are dropped and the audio clock falls behind
 *   `performance.now()` by them for the rest of the recording (Chromium under load: a capture eight
 *   blocks short had every later block 340 ms early by the smallest offset seen before it, and the
 *   engine refused its mouth-voice sync). So a block's offset is the smallest seen at it or after
 *   it (D-770): exact after a drop and after a late read. A stretch the browser holds back instead
 *   of dropping (a backlog that stays) is read as a drop, and stamps the blocks after it late by it:
 *   which the audio clock alone cannot tell apart, and the track's timestamps can.
 */
export function blockTimes(
  blocks: readonly Pick<MicrophoneBlock, "receivedMs" | "clockMs" | "readMs">[],
  clock: MicrophoneClock,
  inputLatencyS: number,
  seenOffsetMs = Number.POSITIVE_INFINITY,
): number[] {
  const times = new Array<number>(blocks.length);
  let offsetMs = Number.POSITIVE_INFINITY;
  if (clock === "capture") {
    offsetMs = seenOffsetMs;
    for (const block of blocks) offsetMs = Math.min(offsetMs, block.receivedMs - block.readMs);
  }
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i]!;
    if (clock === "audio-context") offsetMs = Math.min(offsetMs, block.receivedMs - block.readMs);
    times[i] = (block.clockMs + offsetMs) / 1000 - inputLatencyS;
  }
  return times;
}

/** Chromium's MediaStreamTrackProcessor for an audio track (not yet in TypeScript's DOM library). */
type AudioTrackProcessorConstructor = new (init: {
  track: MediaStreamTrack;
  maxBufferSize?: number;
}) => {
  readable: ReadableStream<AudioData>;
};

/** Audio chunks the track processor may hold while the page is busy (10 ms each in Chromium), oldest dropped beyond. */
const CHUNK_QUEUE = 100;

export class Microphone {
  private listener: ((block: MicrophoneBlock) => void) | null = null;
  private rate = 0;
  /** The smallest `receivedMs - readMs` of every block since the microphone opened, ms (the capture clock's bound). */
  private seenOffsetMs = Number.POSITIVE_INFINITY;

  private constructor(
    readonly clock: MicrophoneClock,
    private readonly release: () => Promise<void>,
    /** The track's input latency, seconds, where the source's clock does not count it (0 where the browser does not say). */
    private readonly inputLatencyS: number,
    sampleRate: number,
  ) {
    this.rate = sampleRate;
  }

  /** Taps `stream`'s audio track: its own chunks where the browser hands them over, else the worklet module at `workletUrl`. */
  static async open(stream: MediaStream, workletUrl: string): Promise<Microphone> {
    const track = stream.getAudioTracks()[0];
    const Processor = (globalThis as { MediaStreamTrackProcessor?: AudioTrackProcessorConstructor }).MediaStreamTrackProcessor;
    if (track && Processor) {
      try {
        return Microphone.fromTrack(new Processor({ track, maxBufferSize: CHUNK_QUEUE }), track);
      } catch {
        // A processor for video only (or none on this thread): the worklet serves.
      }
    }
    return Microphone.fromWorklet(stream, workletUrl);
  }

  /** The track's chunks, each with its capture timestamp (µs on the browser's clock). */
  private static fromTrack(processor: InstanceType<AudioTrackProcessorConstructor>, track: MediaStreamTrack): Microphone {
    const reader = processor.readable.getReader();
    let open = true;
    const microphone = new Microphone(
      "capture",
      async () => {
        open = false;
        await reader.cancel().catch(() => undefined);
      },
      0,
      track.getSettings().sampleRate ?? 48_000,
    );
    const read = async () => {
      while (open) {
        const { value: chunk, done } = await reader.read();
        if (done) return;
        const receivedMs = performance.now();
        try {
          const samples = new Float32Array(chunk.numberOfFrames);
          chunk.copyTo(samples, { planeIndex: 0, format: "f32-planar" });
          microphone.rate = chunk.sampleRate;
          const clockMs = chunk.timestamp / 1000;
          const readMs = clockMs + (chunk.numberOfFrames / chunk.sampleRate) * 1000;
          microphone.seenOffsetMs = Math.min(microphone.seenOffsetMs, receivedMs - readMs);
          microphone.listener?.({ samples, receivedMs, clockMs, readMs });
        } finally {
          chunk.close();
        }
      }
    };
    read().catch((error: unknown) => console.error(error));
    return microphone;
  }

  /** The worklet's blocks, each with the audio clock's frame number of its first sample. */
  private static async fromWorklet(stream: MediaStream, workletUrl: string): Promise<Microphone> {
    const context = new AudioContext();
    await context.audioWorklet.addModule(workletUrl);
    const source = context.createMediaStreamSource(stream);
    const node = new AudioWorkletNode(context, "microphone-tap", { numberOfInputs: 1, numberOfOutputs: 0 });
    source.connect(node);
    if (context.state !== "running") await context.resume();
    const settings = stream.getAudioTracks()[0]?.getSettings() as (MediaTrackSettings & { latency?: number }) | undefined;
    const latency = settings?.latency;
    const microphone = new Microphone(
      "audio-context",
      async () => {
        source.disconnect();
        node.disconnect();
        await context.close();
      },
      typeof latency === "number" && Number.isFinite(latency) && latency >= 0 ? latency : 0,
      context.sampleRate,
    );
    node.port.onmessage = (event: MessageEvent<{ frame: number; samples: Float32Array }>) => {
      const receivedMs = performance.now();
      microphone.listener?.({
        samples: event.data.samples,
        receivedMs,
        clockMs: (event.data.frame / context.sampleRate) * 1000,
        readMs: context.currentTime * 1000,
      });
    };
    return microphone;
  }

  get sampleRate(): number {
    return this.rate;
  }

  /** Each block's capture-clock time, seconds: the blocks of one recording, in the order they came (blockTimes). */
  timesOf(blocks: readonly MicrophoneBlock[]): number[] {
    return blockTimes(blocks, this.clock, this.inputLatencyS, this.seenOffsetMs);
  }

  /** Receives every block from now on (one listener). */
  onBlock(listener: ((block: MicrophoneBlock) => void) | null): void {
    this.listener = listener;
  }

  async close(): Promise<void> {
    this.listener = null;
    await this.release();
  }
}
