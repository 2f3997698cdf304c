import type { TestProject } from "vitest/node";
import { ensureMedia, type MediaManifest } from "../../scripts/media/generate";

declare module "vitest" {
  export interface ProvidedContext {
    /** The fake camera and microphone files of the browser tests (scripts/media/generate.ts). */
    media: MediaManifest;
  }
}

/** Makes the test media once per run (kept between runs while the generator and photograph are unchanged). */
export async function setup(project: TestProject) {
  project.provide("media", await ensureMedia());
}
