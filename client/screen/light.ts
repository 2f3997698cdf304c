/**
 * The light challenge's colour over the whole screen (`body[data-light]` in screen.css), every
 * text in the ink that reads best on it. `data-light` names the phase: `preflight` or `sequence`.
 * The hosted screen and the device check page paint it alike.
 */

import { inkOn } from "../../shared/lib/screen-theme";
import type { LightLayer } from "../capture/capture";

export const screenLight: LightLayer = {
  show(hex, phase) {
    const body = document.body;
    body.style.setProperty("--light", hex);
    body.style.setProperty("--light-ink", inkOn(hex));
    body.dataset.light = phase;
  },
  clear() {
    const body = document.body;
    delete body.dataset.light;
    body.style.removeProperty("--light");
    body.style.removeProperty("--light-ink");
  },
};
