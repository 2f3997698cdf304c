/** The photograph without a pulse (mouth and speech still move together): refused for no pulse. */
import { describe, inject } from "vitest";
import { refusesAttack } from "./presence-attacks";

describe("the device check page on a still photograph", () => {
  refusesAttack(inject("media").still, "no_pulse");
});
