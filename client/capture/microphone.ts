/**
 * The microphone on the capture clock: an AudioWorklet (client/capture/audio-worklet.ts) hands over
 * blocks of samples with the audio clock's frame number, and the input side ties the audio clock to
 * `performance.now()`, so each block gets the capture-clock time of its first sample: a frame was
 * rendered no later than the page reads the clock past it (the smallest offset of the two clocks
 * seen is the render's), and it reached the microphone the track's input latency before that. The
 * output side (`getOutputTimestamp()`) is no measure of it: it adds the output latency, which a
 * Bluetooth headset makes 150 ms or more, to every sample (D-389).
 */

export interface MicrophoneBlock {
  /** Capture-clock time of `samples[0]`, seconds (performance.now() / 1000). */
  t: number;
  samples: Float32Array;
}

export class Microphone {
  private listener: ((block: MicrophoneBlock) => void) | null = null;
  /** performance.now() minus the audio clock (ms): the smallest seen, the read least delayed after its render. */
  private clockOffsetMs = Number.POSITIVE_INFINITY;

  private constructor(
    readonly context: AudioContext,
    private readonly node: AudioWorkletNode,
    private readonly source: MediaStreamAudioSourceNode,
    /** The track's input latency, seconds (0 where the browser does not say). */
    private readonly inputLatencyS: number,
  ) {
    node.port.onmessage = (event: MessageEvent<{ frame: number; samples: Float32Array }>) => {
      this.listener?.({ t: this.captureTime(event.data.frame), samples: event.data.samples });
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

  /** Where the audio clock's frame `frame` falls on the capture clock, seconds. */
  private captureTime(frame: number): number {
    this.clockOffsetMs = Math.min(this.clockOffsetMs, performance.now() - this.context.currentTime * 1000);
    return ((frame / this.context.sampleRate) * 1000 + this.clockOffsetMs) / 1000 - this.inputLatencyS;
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
