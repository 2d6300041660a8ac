export * from "octagonal-wheels/hash/xxhash.js";
export type * from "octagonal-wheels/hash/xxhash.js";
