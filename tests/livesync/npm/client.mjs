// A LiveSync-like device for the gate's tests: PouchDB (the replication client LiveSync is built on) with a
// JWT signed on the device the way LiveSync's "Use JWT" mode signs it (WebCrypto ECDSA over base64url header
// and payload, payload {exp, iat, sub, "_couchdb.roles": ["_admin"]}). Written for these tests, not copied.
// Usage: node client.mjs '<json>'; prints one JSON line. Actions: replicate, live-pull, decrypt-setup-uri.
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const PouchDB = require("pouchdb");

const spec = JSON.parse(process.argv[2]);

const b64url = (bytes) => Buffer.from(bytes).toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

async function signToken() {
  const pem = spec.key.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const der = Buffer.from(pem, "base64");
  const curve = spec.alg === "ES512" ? "P-521" : "P-256";
  const hash = spec.alg === "ES512" ? "SHA-512" : "SHA-256";
  const key = await crypto.subtle.importKey("pkcs8", der, { name: "ECDSA", namedCurve: curve }, false, ["sign"]);
  const iat = Math.floor(Date.now() / 1000);
  const header = { alg: spec.alg, typ: "JWT", kid: spec.kid };
  const payload = { exp: iat + 5 * 60, iat, sub: spec.sub ?? spec.kid, "_couchdb.roles": ["_admin"] };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  const sig = await crypto.subtle.sign({ name: "ECDSA", hash }, key, new TextEncoder().encode(input));
  return `${input}.${b64url(new Uint8Array(sig))}`;
}

function remoteDb(token) {
  return new PouchDB(spec.gate, {
    skip_setup: true,
    fetch: (url, opts) => {
      opts.headers.set("Authorization", `Bearer ${token}`);
      return PouchDB.fetch(url, opts);
    },
  });
}

async function main() {
  if (spec.action === "decrypt-setup-uri") {
    const { decryptWithEphemeralSalt } = await import("octagonal-wheels/encryption/hkdf");
    const prefix = "obsidian://setuplivesync?settings=";
    const sealed = decodeURIComponent(spec.uri.trim().slice(prefix.length));
    return JSON.parse(await decryptWithEphemeralSalt(sealed, spec.passphrase));
  }
  const token = await signToken();
  const local = new PouchDB(spec.dir);
  const remote = remoteDb(token);
  for (const doc of spec.put ?? []) {
    const old = await local.get(doc._id).catch(() => null);
    await local.put(old ? { ...doc, _rev: old._rev } : doc);
  }
  const out = {};
  if (spec.action === "replicate") {
    if (spec.direction !== "pull") {
      const r = await local.replicate.to(remote, { batch_size: 20 });
      out.push = { ok: r.ok, docs_written: r.docs_written, doc_write_failures: r.doc_write_failures };
    }
    if (spec.direction !== "push") {
      const r = await local.replicate.from(remote, { batch_size: 20 });
      out.pull = { ok: r.ok, docs_written: r.docs_written, doc_write_failures: r.doc_write_failures };
    }
  } else if (spec.action === "live-pull") {
    out.seen = await new Promise((resolve, reject) => {
      const rep = local.replicate.from(remote, { live: true, retry: false });
      const timer = setTimeout(() => { rep.cancel(); resolve(false); }, spec.wait_ms ?? 20000);
      rep.on("change", async () => {
        const got = await local.get(spec.expect).catch(() => null);
        if (got) { clearTimeout(timer); rep.cancel(); resolve(true); }
      });
      rep.on("error", (e) => { clearTimeout(timer); reject(e); });
    });
  }
  const all = await local.allDocs({ include_docs: true, conflicts: true });
  out.docs = Object.fromEntries(all.rows.map((r) => [r.id, { data: r.doc.data, conflicts: r.doc._conflicts ?? [] }]));
  await local.close();
  return out;
}

main().then(
  (r) => { process.stdout.write(JSON.stringify(r) + "\n"); process.exit(0); },
  (e) => { process.stdout.write(JSON.stringify({ error: String(e && (e.message || e.reason || e)), status: e && e.status, name: e && e.name }) + "\n"); process.exit(1); },
);
