/**
 * The microphone on the capture clock: an AudioWorklet (client/capture/audio-worklet.ts) hands over
 * blocks of samples with the audio clock's frame number, and the input side ties the audio clock to
 * `performance.now()`, so each block gets the capture-clock time of its first sample: a frame was
 * rendered no later than the page reads the clock past it, and it reached the microphone the
 * track's input latency before that. The output side (`getOutputTimestamp()`) is no measure of it:
 * it adds the output latency, which a Bluetooth headset makes 150 ms or more, to every sample
 * (D-389). The blocks of a recording are timed together when it ends (`blockTimes`, D-770).
 */

export interface MicrophoneBlock {
  /** The audio clock's frame number of `samples[0]`. */
  frame: number;
  samples: Float32Array;
  /** performance.now() minus the audio clock when the page received the block, ms: the clocks' offset plus how late the read came. */
  offsetMs: number;
  /** performance.now() when the page received the block, ms. */
  receivedMs: number;
}

/**
 * Where each block's first sample falls on the capture clock, seconds, for the blocks of one
 * recording in the order they came. Each block's `offsetMs` is the two clocks' offset plus a delay
 * of zero or more (a read of the audio clock comes no earlier than the render it reports), and the
 * offset only grows: when the audio thread misses its turns, the samples of that stretch are
 * dropped and the audio clock falls behind `performance.now()` by them for the rest of the
 * recording (Chromium under load: a capture eight blocks short had every later block 340 ms early
 * by the smallest offset seen before it, and the engine refused its mouth-voice sync). So a block's
 * offset is the smallest seen at it or after it: exact after a drop (no read from before the drop
 * is used after it) and after a late read (the block takes a later, prompt one). The smallest seen
 * before it (D-389 as first built) is right only where nothing was dropped.
 */
export function blockTimes(
  blocks: readonly Pick<MicrophoneBlock, "frame" | "offsetMs">[],
  sampleRate: number,
  inputLatencyS: number,
): number[] {
  const times = new Array<number>(blocks.length);
  let offsetMs = Number.POSITIVE_INFINITY;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i]!;
    offsetMs = Math.min(offsetMs, block.offsetMs);
    times[i] = ((block.frame / sampleRate) * 1000 + offsetMs) / 1000 - inputLatencyS;
  }
  return times;
}

export class Microphone {
  private listener: ((block: MicrophoneBlock) => void) | null = null;

  private constructor(
    readonly context: AudioContext,
    private readonly node: AudioWorkletNode,
    private readonly source: MediaStreamAudioSourceNode,
    /** The track's input latency, seconds (0 where the browser does not say). */
    private readonly inputLatencyS: number,
  ) {
    node.port.onmessage = (event: MessageEvent<{ frame: number; samples: Float32Array }>) => {
      const receivedMs = performance.now();
      const offsetMs = receivedMs - this.context.currentTime * 1000;
      this.listener?.({ frame: event.data.frame, samples: event.data.samples, offsetMs, receivedMs });
    };
  }

  /** Taps `stream`'s audio track with the worklet module at `workletUrl`. */
  static async open(stream: MediaStream, workletUrl: string): Promise<Microphone> {
    const context = new AudioContext();
    await context.audioWorklet.addModule(workletUrl);
    const source = context.createMediaStreamSource(stream);
    const node = new AudioWorkletNode(context, "microphone-tap", { numberOfInputs: 1, numberOfOutputs: 0 });
    source.connect(node);
    if (context.state !== "running") await context.resume();
    const settings = stream.getAudioTracks()[0]?.getSettings() as (MediaTrackSettings & { latency?: number }) | undefined;
    const latency = settings?.latency;
    return new Microphone(context, node, source, typeof latency === "number" && Number.isFinite(latency) && latency >= 0 ? latency : 0);
  }

  get sampleRate(): number {
    return this.context.sampleRate;
  }

  /** Each block's capture-clock time, seconds: the blocks of one recording, in the order they came (blockTimes). */
  timesOf(blocks: readonly MicrophoneBlock[]): number[] {
    return blockTimes(blocks, this.context.sampleRate, this.inputLatencyS);
  }

  /** Receives every block from now on (one listener). */
  onBlock(listener: ((block: MicrophoneBlock) => void) | null): void {
    this.listener = listener;
  }

  async close(): Promise<void> {
    this.listener = null;
    this.source.disconnect();
    this.node.disconnect();
    await this.context.close();
  }
}
