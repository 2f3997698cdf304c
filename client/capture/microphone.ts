/**
 * The microphone on the capture clock: an AudioWorklet (client/capture/audio-worklet.ts) hands over
 * blocks of samples with the audio clock's frame number, and `getOutputTimestamp()` ties the audio
 * clock to `performance.now()`, so each block gets the capture-clock time of its first sample.
 */

export interface MicrophoneBlock {
  /** Capture-clock time of `samples[0]`, seconds (performance.now() / 1000). */
  t: number;
  samples: Float32Array;
}

export class Microphone {
  private listener: ((block: MicrophoneBlock) => void) | null = null;

  private constructor(
    readonly context: AudioContext,
    private readonly node: AudioWorkletNode,
    private readonly source: MediaStreamAudioSourceNode,
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
    return new Microphone(context, node, source);
  }

  get sampleRate(): number {
    return this.context.sampleRate;
  }

  /** Where the audio clock's frame `frame` falls on the capture clock, seconds. */
  private captureTime(frame: number): number {
    const stamp = this.context.getOutputTimestamp();
    const contextTime = stamp.contextTime ?? this.context.currentTime;
    const performanceTime = stamp.performanceTime ?? performance.now();
    return (performanceTime + (frame / this.context.sampleRate - contextTime) * 1000) / 1000;
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
