// node ort_run.js MODEL X_BIN B T D OUT_BIN: runs an ONNX model with input x [B, T, D] (raw float32)
// in ONNX Runtime (onnxruntime-node; make_model_variants.py --ort sets NODE_PATH) and writes y raw.
const ort = require('onnxruntime-node'); const fs = require('fs');
(async () => {
  const [model, xbin, B, T, D, out] = process.argv.slice(2);
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const buf = fs.readFileSync(xbin);
  const x = new ort.Tensor('float32', new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4), [+B, +T, +D]);
  const r = await s.run({ x }, ['y']);
  fs.writeFileSync(out, Buffer.from(r.y.data.buffer, r.y.data.byteOffset, r.y.data.byteLength));
})().catch((e) => { console.error(String(e)); process.exit(1); });
