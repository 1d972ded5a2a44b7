// Runs a WASI command module under Node.js's V8 (node:wasi), as a peer engine for
// `dlab wasm bench --peer node="node --no-warnings tools/wasi-run.mjs {module} {workload} {size} {calls}"`.
// Exits with the module's exit status.
import { readFile } from "node:fs/promises";
import { argv, exit } from "node:process";
import { WASI } from "node:wasi";

const [, , module, ...args] = argv;
if (!module) {
  console.error("usage: node tools/wasi-run.mjs MODULE.wasm [ARGS...]");
  exit(2);
}
const wasi = new WASI({ version: "preview1", args: [module, ...args], env: {}, returnOnExit: true });
const compiled = await WebAssembly.compile(await readFile(module));
const instance = await WebAssembly.instantiate(compiled, wasi.getImportObject());
exit(wasi.start(instance));
