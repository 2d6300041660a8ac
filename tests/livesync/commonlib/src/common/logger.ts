export * from "octagonal-wheels/common/logger";
export type * from "octagonal-wheels/common/logger";
