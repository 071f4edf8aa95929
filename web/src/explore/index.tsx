/** The neighbourhood canvas (issue 28, item 3): its own chunk, loaded when first opened. */
export { ExplorePage } from "./ExplorePage";
