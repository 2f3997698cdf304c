// The page side of scripts/media/faces.ts (plain JavaScript: it runs as it is in Chromium).

/** ArcFace's five reference points (eye centres, nose tip, mouth corners) in its 112x112 crop (InsightFace). */
const ARCFACE_POINTS = [
  [38.2946, 51.6963],
  [73.5318, 51.5014],
  [56.0252, 71.7366],
  [41.5493, 92.3655],
  [70.7299, 92.2041],
];

/** The five ArcFace points read off face-api's 68 landmarks. */
function fivePoints(p) {
  const centre = (points) => [points.reduce((s, q) => s + q.x, 0) / points.length, points.reduce((s, q) => s + q.y, 0) / points.length];
  return [centre(p.slice(36, 42)), centre(p.slice(42, 48)), [p[30].x, p[30].y], [p[48].x, p[48].y], [p[54].x, p[54].y]];
}

/** The least-squares similarity (rotation, one scale, shift) taking `from` onto `to`: x' = a x - b y + e, y' = b x + a y + f. */
function similarity(from, to) {
  const n = from.length;
  const mean = (points, k) => points.reduce((s, q) => s + q[k], 0) / n;
  const [fx, fy, tx, ty] = [mean(from, 0), mean(from, 1), mean(to, 0), mean(to, 1)];
  let [norm, dot, cross] = [0, 0, 0];
  for (let i = 0; i < n; i++) {
    const [x, y, u, v] = [from[i][0] - fx, from[i][1] - fy, to[i][0] - tx, to[i][1] - ty];
    norm += x * x + y * y;
    dot += x * u + y * v;
    cross += x * v - y * u;
  }
  const [a, b] = [dot / norm, cross / norm];
  return [a, b, tx - (a * fx - b * fy), ty - (b * fx + a * fy)];
}

/** The face cut out as ArcFace-family networks are trained on: five points onto the reference, 112x112, RGB bytes. */
function arcfaceCrop(imageData, positions) {
  const source = new OffscreenCanvas(imageData.width, imageData.height);
  source.getContext("2d").putImageData(imageData, 0, 0);
  const [a, b, e, f] = similarity(fivePoints(positions), ARCFACE_POINTS);
  const crop = new OffscreenCanvas(112, 112);
  const ctx = crop.getContext("2d", { willReadFrequently: true });
  ctx.imageSmoothingQuality = "high";
  ctx.setTransform(a, b, -b, a, e, f);
  ctx.drawImage(source, 0, 0);
  const rgba = ctx.getImageData(0, 0, 112, 112).data;
  const rgb = new Uint8Array(112 * 112 * 3);
  for (let k = 0; k < 112 * 112; k++) rgb.set(rgba.subarray(4 * k, 4 * k + 3), 3 * k);
  return rgb;
}

/** Runs in the page: loads face-api, makes each variant on a canvas, describes every face. */
export async function describe({ count, variants, models: others = [] }) {
  const faceapi = await import("/face-api/dist/face-api.esm.js");
  faceapi.tf.setWasmPaths("http://faces.test/wasm/");
  await faceapi.tf.setBackend("wasm");
  await faceapi.tf.ready();
  const models = "http://faces.test/face-api/model/";
  await faceapi.nets.ssdMobilenetv1.loadFromUri(models);
  await faceapi.nets.faceLandmark68Net.loadFromUri(models);
  await faceapi.nets.faceRecognitionNet.loadFromUri(models);
  // Other embedding networks to compare: TensorFlow.js graph models fed face-api's aligned box or
  // the ArcFace crop, or ONNX models (on onnxruntime-web's WebAssembly build, served at /ort/) fed
  // the ArcFace crop.
  const ort = others.some((o) => o.format === "onnx") ? await import("/ort/ort.wasm.min.mjs") : null;
  if (ort) Object.assign(ort.env.wasm, { wasmPaths: "http://faces.test/ort/", numThreads: 1 });
  const graphs = [];
  for (const other of others) {
    const model =
      other.format === "onnx"
        ? await ort.InferenceSession.create(`/other/${other.file}`, { executionProviders: ["wasm"] })
        : await faceapi.tf.loadGraphModel(`/other/${other.file}`);
    graphs.push({ ...other, model });
  }
  const embedOnnx = async (graph, pixels, face) => {
    const rgb = arcfaceCrop(pixels, face.landmarks.positions);
    const planes = new Float32Array(rgb.length);
    const area = 112 * 112;
    for (let k = 0; k < area; k++)
      for (let c = 0; c < 3; c++) planes[c * area + k] = (rgb[3 * k + c] / 255) * graph.scale + (graph.offset ?? 0);
    const input = new ort.Tensor("float32", planes, [1, 3, 112, 112]);
    const outputs = await graph.model.run({ [graph.model.inputNames[0]]: input });
    return Array.from(outputs[graph.model.outputNames[0]].data);
  };
  const embedGraph = async (graph, pixels, face) => {
    const output = faceapi.tf.tidy(() => {
      let input;
      if (graph.crop === "arcface") {
        const rgb = arcfaceCrop(pixels, face.landmarks.positions);
        input = faceapi.tf.tensor(
          Float32Array.from(rgb, (v) => v / 255),
          [1, 112, 112, 3],
        );
      } else {
        const size = graph.model.inputs[0].shape[1];
        const box = face.alignedRect.box;
        const [h, w] = [pixels.height, pixels.width];
        const image = faceapi.tf.browser.fromPixels(pixels).toFloat().div(255).expandDims(0);
        input = faceapi.tf.image.cropAndResize(
          image,
          [[box.y / h, box.x / w, (box.y + box.height) / h, (box.x + box.width) / w]],
          [0],
          [size, size],
        );
      }
      const outputs = graph.model.execute(input.mul(graph.scale).add(graph.offset ?? 0));
      const list = Array.isArray(outputs) ? outputs : [outputs];
      return list.find((t) => t.shape[1] === graph.dimension) ?? list[0];
    });
    const embedding = Array.from(await output.data());
    output.dispose();
    return embedding;
  };
  const embedOthers = async (pixels, face) => {
    // face-api's own recognition of the same face again, timed beside the others in the same page.
    const started = performance.now();
    const image = faceapi.tf.browser.fromPixels(pixels);
    const [aligned] = await faceapi.extractFaceTensors(image, [face.alignedRect]);
    const descriptor = await faceapi.nets.faceRecognitionNet.computeFaceDescriptor(aligned);
    faceapi.tf.dispose([image, aligned, descriptor]);
    const result = { faceApiMs: performance.now() - started };
    for (const graph of graphs) {
      const started = performance.now();
      result[graph.name] = await (graph.format === "onnx" ? embedOnnx : embedGraph)(graph, pixels, face);
      result[`${graph.name}Ms`] = performance.now() - started;
    }
    return result;
  };
  const out = [];
  let seed = 12345;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let i = 0; i < count; i++) {
    const blob = await (await fetch(`http://faces.test/image/${i}`)).blob();
    const source = await createImageBitmap(blob);
    for (const variant of variants) {
      const scale = variant === "half" ? 0.5 : 1;
      const canvas = new OffscreenCanvas(Math.round(source.width * scale), Math.round(source.height * scale));
      const ctx = canvas.getContext("2d", { willReadFrequently: true });
      if (variant === "mirror") ctx.setTransform(-1, 0, 0, 1, canvas.width, 0);
      if (variant === "dim-warm") ctx.filter = "brightness(0.55) sepia(0.35)";
      if (variant === "darker-skin") ctx.filter = "brightness(0.62) saturate(1.25) contrast(1.05)";
      if (variant === "crop") ctx.drawImage(source, -source.width * 0.15, -source.height * 0.1, source.width * 1.3, source.height * 1.3);
      else ctx.drawImage(source, 0, 0, canvas.width, canvas.height);
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.filter = "none";
      let input = canvas.transferToImageBitmap();
      if (variant === "jpeg60") {
        const c2 = new OffscreenCanvas(input.width, input.height);
        c2.getContext("2d").drawImage(input, 0, 0);
        input = await createImageBitmap(await c2.convertToBlob({ type: "image/jpeg", quality: 0.6 }));
      }
      const c3 = new OffscreenCanvas(input.width, input.height);
      const ctx3 = c3.getContext("2d", { willReadFrequently: true });
      ctx3.drawImage(input, 0, 0);
      const pixels = ctx3.getImageData(0, 0, c3.width, c3.height);
      if (variant === "noise") {
        for (let k = 0; k < pixels.data.length; k++) if (k % 4 !== 3) pixels.data[k] = pixels.data[k] + (random() - 0.5) * 28;
      }
      const tensor = faceapi.tf.browser.fromPixels(pixels);
      const faces = await faceapi
        .detectAllFaces(tensor, new faceapi.SsdMobilenetv1Options({ minConfidence: 0.5 }))
        .withFaceLandmarks()
        .withFaceDescriptors();
      if (variant === "occluder") {
        // Dark glasses drawn over the eyes that face-api found on the plain image, then described again.
        for (const face of faces) {
          const p = face.landmarks.positions;
          const y = (p[37].y + p[44].y) / 2;
          ctx3.fillStyle = "rgb(20,20,24)";
          for (const eye of [p.slice(36, 42), p.slice(42, 48)]) {
            const cx = eye.reduce((s, q) => s + q.x, 0) / 6;
            ctx3.beginPath();
            ctx3.ellipse(cx, y, face.detection.box.width * 0.16, face.detection.box.width * 0.1, 0, 0, 2 * Math.PI);
            ctx3.fill();
          }
          ctx3.fillRect(p[39].x, y - 3, p[42].x - p[39].x, 5);
        }
        tensor.dispose();
        const occluded = faceapi.tf.browser.fromPixels(ctx3.getImageData(0, 0, c3.width, c3.height));
        const again = await faceapi
          .detectAllFaces(occluded, new faceapi.SsdMobilenetv1Options({ minConfidence: 0.5 }))
          .withFaceLandmarks()
          .withFaceDescriptors();
        occluded.dispose();
        faces.splice(0, faces.length, ...again);
      } else tensor.dispose();
      const described = variant === "occluder" ? ctx3.getImageData(0, 0, c3.width, c3.height) : pixels;
      for (const face of faces) {
        const box = face.detection.box;
        const left = variant === "mirror" ? input.width - box.x - box.width : box.x;
        const xScale = variant === "half" ? 2 : 1;
        const x = variant === "crop" ? (left + source.width * 0.15) / 1.3 : left * xScale;
        out.push({
          image: String(i),
          variant,
          x: Math.round(x),
          score: face.detection.score,
          descriptor: Array.from(face.descriptor),
          ...(graphs.length ? { others: await embedOthers(described, face) } : {}),
        });
      }
    }
  }
  return out;
}
