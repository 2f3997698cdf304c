/** The bona fide video with its speech 400 ms late: refused because mouth and voice are out of step. */
import { describe, inject } from "vitest";
import { refusesAttack } from "./presence-attacks";

describe("the device check page with the sound shifted against the video", () => {
  refusesAttack(inject("media").shifted, "av_desync");
});
