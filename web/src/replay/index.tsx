/** The agent sessions list and the session replay on a canvas (issue 14, item 5). */
export { ReplayPage } from "./ReplayPage";
export { SessionsPage } from "./SessionsPage";
