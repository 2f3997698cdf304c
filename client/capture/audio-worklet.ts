/**
 * The microphone's AudioWorklet processor: hands the page the first input channel in blocks of
 * 2048 samples, each with the audio clock's frame number of its first sample, so the page can place
 * every sample on the capture clock (client/capture/microphone.ts).
 */
declare const currentFrame: number;
declare function registerProcessor(name: string, processor: new () => object): void;
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
}

const BLOCK = 2048;

class MicrophoneTap extends AudioWorkletProcessor {
  private buffer = new Float32Array(BLOCK);
  private filled = 0;
  private firstFrame = 0;

  process(inputs: Float32Array[][]): boolean {
    const channel = inputs[0]?.[0];
    if (!channel) return true;
    for (let i = 0; i < channel.length; i++) {
      if (this.filled === 0) this.firstFrame = currentFrame + i;
      this.buffer[this.filled++] = channel[i] as number;
      if (this.filled === BLOCK) {
        this.port.postMessage({ frame: this.firstFrame, samples: this.buffer }, [this.buffer.buffer]);
        this.buffer = new Float32Array(BLOCK);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor("microphone-tap", MicrophoneTap);
