// ONNX Runtime's side of bench/ort_gqa.py and bench/ort_mha.py (through
// bench/ort_peer.py): one process, one model.
//
//   node bench/ort_run.js DIR THREADS REPEAT WARMUP
//
// Loads DIR/layer.onnx (CPU execution provider, THREADS intra-op threads,
// sequential, all graph optimizations), reads each input named in
// DIR/inputs.json ({"name": [dims], ...}) from DIR/<name>.bin (raw float32),
// makes WARMUP untimed and REPEAT timed calls that fetch only y, writes the
// last y to DIR/y_ort.bin and prints `median M ms min N ms` and `version V`
// on stdout. onnxruntime-node is found through NODE_PATH (ort_peer.py sets
// it).
// Before ONNX Runtime starts: else it keeps a device id and a queue of
// telemetry events under ~/.cache/Microsoft, outside the repository.
process.env.ORT_DISABLE_TELEMETRY = '1';
const ort = require('onnxruntime-node');
const fs = require('fs');
const path = require('path');

(async () => {
  const [dir, threads, repeat, warmup] = process.argv.slice(2);
  if (warmup === undefined) {
    console.error('usage: node ort_run.js DIR THREADS REPEAT WARMUP');
    process.exit(2);
  }
  const session = await ort.InferenceSession.create(
      path.join(dir, 'layer.onnx'),
      {executionProviders: ['cpu'], intraOpNumThreads: +threads,
       interOpNumThreads: 1, graphOptimizationLevel: 'all',
       executionMode: 'sequential'});
  const shapes = JSON.parse(
      fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
  const feeds = {};
  for (const [name, dims] of Object.entries(shapes)) {
    const raw = fs.readFileSync(path.join(dir, name + '.bin'));
    const data = new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  let out;
  for (let i = 0; i < +warmup; i++) out = await session.run(feeds, ['y']);
  const times = [];
  for (let i = 0; i < +repeat; i++) {
    const start = process.hrtime.bigint();
    out = await session.run(feeds, ['y']);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  if (!out) out = await session.run(feeds, ['y']);
  times.sort((a, b) => a - b);
  const y = out.y.data;
  fs.writeFileSync(path.join(dir, 'y_ort.bin'),
                   Buffer.from(y.buffer, y.byteOffset, y.byteLength));
  if (times.length)
    console.log(`median ${times[times.length >> 1].toFixed(3)} ms ` +
                `min ${times[0].toFixed(3)} ms`);
  console.log(`version ${ort.env.versions ? ort.env.versions.common : '?'}`);
})().catch((error) => {
  console.error(String(error && error.message || error));
  process.exit(1);
});
