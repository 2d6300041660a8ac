// notegate's entry into LiveSync's common library (the files beside it, unmodified, at the commit README.md names):
// DirectFileManipulator, LiveSync's own API for reading and writing notes straight in CouchDB, chunks, metadata,
// end-to-end encryption and path obfuscation included. Bundled by `npm run build-commonlib` in ../npm.
export { DirectFileManipulator } from "./src/API/DirectFileManipulatorV2.ts";
// How the plugin turns a file into a Blob (text or binary) and a read entry back into the file's content.
export { createBinaryBlob, createTextBlob, readContent } from "./src/common/utils.ts";
