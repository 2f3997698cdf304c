/**
 * The skin region of a face (docs/presence-descriptor.md 3.2, step 1) and its mean colour.
 * Pure: landmarks and pixels in, numbers out; no DOM.
 */

/** A point in image pixels. */
export interface Point {
  x: number;
  y: number;
}

/** An integer pixel rectangle of the frame. */
export interface PixelBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Which pixels of `box` belong to the skin region: `mask[row * box.width + column]` is 1 or 0. */
export interface SkinMask {
  box: PixelBox;
  mask: Uint8Array;
  /** How many ones `mask` holds. */
  pixels: number;
}

/** The face outline: the jaw line (0..16) and back along the eyebrows (26..17). */
const OUTLINE = [...Array.from({ length: 17 }, (_, i) => i), ...Array.from({ length: 10 }, (_, i) => 26 - i)];
/** Regions cut out of the face: the eyes and the outer mouth. */
const HOLES = [range(36, 41), range(42, 47), range(48, 59)];

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function centroid(points: readonly Point[], indices: readonly number[]): Point {
  let x = 0;
  let y = 0;
  for (const i of indices) {
    x += points[i]!.x;
    y += points[i]!.y;
  }
  return { x: x / indices.length, y: y / indices.length };
}

/** Distance between the centres of the two eyes (landmarks 36..41 and 42..47). */
export function interOcularDistance(landmarks: readonly Point[]): number {
  const a = centroid(landmarks, range(36, 41));
  const b = centroid(landmarks, range(42, 47));
  return Math.hypot(a.x - b.x, a.y - b.y);
}

/**
 * Sets `mask` to `value` at the pixels of `box` (centres at +0.5) inside `polygon` by the even-odd
 * rule: a centre (x, y) is inside when an odd number of the polygon's edges that straddle y (one end
 * above, one not) cross that row at an x greater than x. The crossings depend on the row only, so
 * each row's are found once and the row is filled between them: the same test as one made pixel by
 * pixel, at the cost of the edges per row rather than per pixel.
 */
function fillInside(polygon: readonly Point[], box: PixelBox, mask: Uint8Array, value: 0 | 1): void {
  const crossings: number[] = [];
  for (let row = 0; row < box.height; row++) {
    const y = box.y + row + 0.5;
    crossings.length = 0;
    for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
      const a = polygon[i]!;
      const b = polygon[j]!;
      if (a.y > y !== b.y > y) crossings.push(((b.x - a.x) * (y - a.y)) / (b.y - a.y) + a.x);
    }
    if (crossings.length === 0) continue;
    crossings.sort((p, q) => p - q);
    // Walking right, `passed` counts the crossings at or left of the centre; those beyond it are the rest.
    let passed = 0;
    for (let column = 0; column < box.width; column++) {
      const x = box.x + column + 0.5;
      while (passed < crossings.length && crossings[passed]! <= x) passed++;
      if ((crossings.length - passed) % 2 === 1) mask[row * box.width + column] = value;
    }
  }
}

/**
 * Clears `mask` at the pixels of `box` whose centres lie within `margin` of an edge of `polygon`.
 * Only the pixels of each edge's own bounding box widened by `margin` can: each edge is tested
 * there alone.
 */
function clearNearEdges(polygon: readonly Point[], box: PixelBox, mask: Uint8Array, margin: number): void {
  const margin2 = margin * margin;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[i]!;
    const b = polygon[j]!;
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const length2 = dx * dx + dy * dy;
    const c0 = Math.max(0, Math.floor(Math.min(a.x, b.x) - margin - box.x - 0.5));
    const c1 = Math.min(box.width - 1, Math.ceil(Math.max(a.x, b.x) + margin - box.x - 0.5));
    const r0 = Math.max(0, Math.floor(Math.min(a.y, b.y) - margin - box.y - 0.5));
    const r1 = Math.min(box.height - 1, Math.ceil(Math.max(a.y, b.y) + margin - box.y - 0.5));
    for (let row = r0; row <= r1; row++) {
      const y = box.y + row + 0.5;
      for (let column = c0; column <= c1; column++) {
        const x = box.x + column + 0.5;
        const t = length2 > 0 ? Math.max(0, Math.min(1, ((x - a.x) * dx + (y - a.y) * dy) / length2)) : 0;
        const ex = x - (a.x + t * dx);
        const ey = y - (a.y + t * dy);
        if (ex * ex + ey * ey < margin2) mask[row * box.width + column] = 0;
      }
    }
  }
}

/**
 * The pixels of a `frameWidth` x `frameHeight` frame inside `polygon` and outside every one of
 * `holes`, every boundary moved inwards by `margin` pixels, judged at their centres, within the
 * polygon's bounding box. Row by row rather than pixel by pixel: the face worker makes one for
 * every camera frame, and testing each pixel against every edge cost more than its landmarks.
 */
export function regionMask(
  polygon: readonly Point[],
  holes: readonly (readonly Point[])[],
  frameWidth: number,
  frameHeight: number,
  margin: number,
): SkinMask {
  const x0 = Math.max(0, Math.floor(Math.min(...polygon.map((p) => p.x))));
  const y0 = Math.max(0, Math.floor(Math.min(...polygon.map((p) => p.y))));
  const x1 = Math.min(frameWidth, Math.ceil(Math.max(...polygon.map((p) => p.x))));
  const y1 = Math.min(frameHeight, Math.ceil(Math.max(...polygon.map((p) => p.y))));
  const box = { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
  const mask = new Uint8Array(box.width * box.height);
  fillInside(polygon, box, mask, 1);
  for (const hole of holes) fillInside(hole, box, mask, 0);
  if (margin > 0) for (const outline of [polygon, ...holes]) clearNearEdges(outline, box, mask, margin);
  let pixels = 0;
  for (const one of mask) pixels += one;
  return { box, mask, pixels };
}

/**
 * The skin region of 68 landmarks (iBUG numbering) in a `frameWidth` x `frameHeight` frame: inside
 * the outline of the jaw and eyebrows, outside the eyes and the outer mouth, every boundary moved
 * inwards by 5% of the inter-ocular distance. Pixels are judged at their centres.
 *
 * @example
 * const skin = skinMask(detection.landmarks.positions, 640, 480);
 */
export function skinMask(landmarks: readonly Point[], frameWidth: number, frameHeight: number): SkinMask {
  if (landmarks.length !== 68) throw new RangeError("skinMask needs the 68 landmarks");
  return regionMask(
    OUTLINE.map((i) => landmarks[i]!),
    HOLES.map((indices) => indices.map((i) => landmarks[i]!)),
    frameWidth,
    frameHeight,
    0.05 * interOcularDistance(landmarks),
  );
}

/**
 * The background region of the light challenge (docs/presence-descriptor.md 11.2): the frame's
 * pixels outside the head, from the top of the frame down to the chin, as the two bands beside the
 * head in a `frameWidth` x `frameHeight` frame. The head is the outline's bounding box widened by
 * half its width on each side; pixels are judged at their centres. A client copies only these
 * boxes out of a frame. Bands with no pixel are left out (none for a face filling the frame).
 */
export function backgroundBands(landmarks: readonly Point[], frameWidth: number, frameHeight: number): PixelBox[] {
  const outline = OUTLINE.map((i) => landmarks[i]!);
  const left = Math.min(...outline.map((p) => p.x));
  const right = Math.max(...outline.map((p) => p.x));
  const half = (right - left) / 2;
  const clampTo = (x: number, limit: number) => Math.min(limit, Math.max(0, x));
  const height = clampTo(Math.ceil(Math.max(...outline.map((p) => p.y))), frameHeight);
  const leftWidth = clampTo(Math.ceil(left - half - 0.5), frameWidth);
  const rightStart = clampTo(Math.floor(right + half - 0.5) + 1, frameWidth);
  return [
    { x: 0, y: 0, width: leftWidth, height },
    { x: rightStart, y: 0, width: frameWidth - rightStart, height },
  ].filter((band) => band.width > 0 && band.height > 0);
}

/**
 * The mean R, G and B of the background (backgroundBands), every 4th pixel of the frame in each
 * direction (columns and rows that are multiples of 4). Each band comes with its pixels as
 * `rgba`, row by row, four bytes a pixel, as VideoFrame.copyTo gives a box. Null when no pixel
 * qualifies.
 */
export function meanBackgroundRgb(
  bands: readonly { box: PixelBox; rgba: ArrayLike<number> }[],
): { r: number; g: number; b: number; pixels: number } | null {
  let r = 0;
  let g = 0;
  let b = 0;
  let count = 0;
  const firstFrom = (start: number) => Math.ceil(start / BACKGROUND_STRIDE) * BACKGROUND_STRIDE;
  for (const { box, rgba } of bands) {
    for (let y = firstFrom(box.y); y < box.y + box.height; y += BACKGROUND_STRIDE) {
      for (let x = firstFrom(box.x); x < box.x + box.width; x += BACKGROUND_STRIDE) {
        const p = 4 * ((y - box.y) * box.width + (x - box.x));
        r += rgba[p] as number;
        g += rgba[p + 1] as number;
        b += rgba[p + 2] as number;
        count++;
      }
    }
  }
  return count === 0 ? null : { r: r / count, g: g / count, b: b / count, pixels: count };
}

/** The background region is sampled every this many pixels in each direction. */
const BACKGROUND_STRIDE = 4;

/**
 * The mean R, G and B of the skin-coloured pixels of `skin` (YCbCr chroma with 77 <= Cb <= 127 and
 * 133 <= Cr <= 173). `rgba` holds the pixels under `skin.box`, row by row, four bytes a pixel, as
 * ImageData does (read where the face is now: the box moved by the face's motion since the mask
 * was made). Null when no pixel qualifies. Under the light challenge (descriptor v2) the coloured
 * light moves skin out of that chroma range, so the client passes `chromaGate: false` and averages
 * the region as it is (docs/presence-descriptor.md 11.2).
 */
export function meanSkinRgb(
  rgba: ArrayLike<number>,
  skin: SkinMask,
  options: { chromaGate?: boolean } = {},
): { r: number; g: number; b: number; pixels: number } | null {
  const gate = options.chromaGate ?? true;
  const { width, height } = skin.box;
  let r = 0;
  let g = 0;
  let b = 0;
  let count = 0;
  for (let p = 0; p < width * height; p++) {
    if (skin.mask[p] === 0) continue;
    const red = rgba[4 * p] as number;
    const green = rgba[4 * p + 1] as number;
    const blue = rgba[4 * p + 2] as number;
    const cb = 128 - 0.168736 * red - 0.331264 * green + 0.5 * blue;
    const cr = 128 + 0.5 * red - 0.418688 * green - 0.081312 * blue;
    if (gate && (cb < 77 || cb > 127 || cr < 133 || cr > 173)) continue;
    r += red;
    g += green;
    b += blue;
    count++;
  }
  return count === 0 ? null : { r: r / count, g: g / count, b: b / count, pixels: count };
}
