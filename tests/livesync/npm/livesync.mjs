// LiveSync's own code as a test peer for the bridge: DirectFileManipulator from LiveSync's common library (vendored
// unmodified in ../commonlib at a pinned commit, bundled by `npm run build-commonlib`) reads and writes notes
// straight in the CouchDB-protocol server, the way LiveSync stores them: chunks, metadata documents, end-to-end
// encryption (its default, V2: PBKDF2 + HKDF + AES-GCM) and path obfuscation. Written for these tests.
// Usage: node livesync.mjs < spec.json (the spec on standard input: files are larger than a command line);
// prints one JSON line: {results: [...]} or {error}.
// Spec: {url, database, passphrase?, obfuscate?, jwt?: {kid, alg, key}, ops: [{op: "put", path, b64, binary?, ctime?, mtime?} |
//        {op: "get", path} | {op: "delete", path}]}; contents travel as base64 so bytes are compared exactly.
import { DirectFileManipulator, createBinaryBlob, createTextBlob, readContent } from "./node_modules/.commonlib/commonlib.mjs";

import { readFileSync } from "node:fs";

const spec = JSON.parse(readFileSync(0, "utf-8"));

// Obsidian (a browser) has FileReader, Node has not: octagonal-wheels base64-encodes buffers of 32 KiB and more
// (an encrypted binary chunk) with readAsDataURL. This stands in for the browser's, nothing of LiveSync's changed.
if (typeof globalThis.FileReader === "undefined") {
  globalThis.FileReader = class {
    readAsDataURL(blob) {
      blob.arrayBuffer().then((buf) => {
        this.result = `data:${blob.type};base64,${Buffer.from(buf).toString("base64")}`;
        this.onload?.({ target: this });
      }, (e) => this.onerror?.(e));
    }
  };
}

const b64url = (bytes) => Buffer.from(bytes).toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

// A device's JWT as LiveSync's "Use JWT" signs it (as in client.mjs): ES256/ES512 over header and payload.
async function signToken(jwt) {
  const der = Buffer.from(jwt.key.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""), "base64");
  const [curve, hash] = jwt.alg === "ES512" ? ["P-521", "SHA-512"] : ["P-256", "SHA-256"];
  const key = await crypto.subtle.importKey("pkcs8", der, { name: "ECDSA", namedCurve: curve }, false, ["sign"]);
  const iat = Math.floor(Date.now() / 1000);
  const header = { alg: jwt.alg, typ: "JWT", kid: jwt.kid };
  const payload = { exp: iat + 5 * 60, iat, sub: jwt.kid, "_couchdb.roles": ["_admin"] };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  const sig = await crypto.subtle.sign({ name: "ECDSA", hash }, key, new TextEncoder().encode(input));
  return `${input}.${b64url(new Uint8Array(sig))}`;
}

// Straight to pouchdb-server (no users there): no credentials (DirectFileManipulator always sends Basic auth);
// through the gate: the device's JWT instead.
function transport(token) {
  return (url, opts) => {
    opts.headers.delete("Authorization");
    if (token) opts.headers.set("Authorization", `Bearer ${token}`);
    return fetch(url, opts);
  };
}

async function main() {
  for (const level of ["log", "info", "debug", "warn"]) console[level] = () => {}; // its logger must not mix into stdout
  const manipulator = new DirectFileManipulator(
    {
      url: spec.url,
      database: spec.database,
      username: "",
      password: "",
      passphrase: spec.passphrase || undefined,
      obfuscatePassphrase: spec.obfuscate ? spec.passphrase : undefined,
    },
    { fetch: transport(spec.jwt ? await signToken(spec.jwt) : null) },
  );
  await manipulator.ready.promise;
  const results = [];
  try {
    for (const op of spec.ops) {
      if (op.op === "put") {
        const bytes = Buffer.from(op.b64, "base64");
        const blob = op.binary ? createBinaryBlob(new Uint8Array(bytes)) : createTextBlob(bytes.toString("utf-8"));
        const now = Date.now();
        const ok = await manipulator.put(op.path, blob, { ctime: op.ctime ?? now, mtime: op.mtime ?? now, size: bytes.length });
        results.push({ ok });
      } else if (op.op === "get") {
        const entry = await manipulator.get(op.path);
        if (!entry || entry.deleted || entry._deleted) {
          results.push({ found: false });
          continue;
        }
        const content = readContent(entry);
        const bytes = typeof content === "string" ? Buffer.from(content, "utf-8") : Buffer.from(new Uint8Array(content));
        results.push({ found: true, type: entry.type, path: entry.path, size: entry.size, b64: bytes.toString("base64") });
      } else if (op.op === "delete") {
        results.push({ ok: await manipulator.delete(op.path) });
      } else {
        throw new Error(`unknown op ${op.op}`);
      }
    }
  } finally {
    await manipulator.close();
  }
  return { results };
}

const write = (line) => new Promise((resolve) => process.stdout.write(line + "\n", resolve));
main().then(
  async (r) => { await write(JSON.stringify(r)); process.exit(0); },
  async (e) => { await write(JSON.stringify({ error: String((e && (e.message || e.reason)) || e) })); process.exit(1); },
);
