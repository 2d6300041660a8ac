import { LayeredChunkManager } from "./LayeredChunkManager";
export { LayeredChunkManager as ChunkManager };
