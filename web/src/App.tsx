/**
 * The app's routes (all under the Vite base /app/) inside the shell. Every Domain page carries the
 * read point in its query string (`?branch=&at=`); the shell's pickers edit it.
 */
import { lazy } from "react";
import { Navigate, Route, Routes } from "react-router";
import { AuthProvider, RequireSession } from "./shell/auth";
import { DomainLayout } from "./shell/DomainLayout";
import { Shell } from "./shell/Shell";
import { SignInPage } from "./signin/SignInPage";

// Each page is its own chunk, loaded when first opened (the shell and sign-in load first): the
// overview's graph library, the replay's layout and the Markdown renderer stay out of the first load.
const page = <K extends string>(load: () => Promise<Record<K, React.ComponentType>>, name: K) =>
  lazy(async () => ({ default: (await load())[name] }));

const DomainsPage = page(() => import("./domains/DomainsPage"), "DomainsPage");
const ComparePage = page(() => import("./history/ComparePage"), "ComparePage");
const RevisionPage = page(() => import("./history/RevisionPage"), "RevisionPage");
const ExplorePage = page(() => import("./explore"), "ExplorePage");
const DuplicatesPage = page(() => import("./duplicates/DuplicatesPage"), "DuplicatesPage");
const HealthPage = page(() => import("./health/HealthPage"), "HealthPage");
const LabPage = page(() => import("./lab"), "LabPage");
const OverviewPage = page(() => import("./overview/OverviewPage"), "OverviewPage");
const ProposalPage = page(() => import("./proposals/ProposalPage"), "ProposalPage");
const ProposalsPage = page(() => import("./proposals/ProposalsPage"), "ProposalsPage");
const RecordPage = page(() => import("./records/RecordPage"), "RecordPage");
const RecordsPage = page(() => import("./records/RecordsPage"), "RecordsPage");
const ReplayPage = page(() => import("./replay"), "ReplayPage");
const SessionsPage = page(() => import("./replay"), "SessionsPage");

export function App() {
  return (
    <AuthProvider>
      <Routes>
        <Route index element={<SignInPage />} />
        <Route
          element={
            <RequireSession>
              <Shell />
            </RequireSession>
          }
        >
          <Route path="domains" element={<DomainsPage />} />
          <Route path="d/:domain" element={<DomainLayout />}>
            <Route index element={<OverviewPage />} />
            <Route path="records" element={<RecordsPage />} />
            <Route path="records/:kind/:key" element={<RecordPage />} />
            <Route path="records/:kind/:key/neighbourhood" element={<ExplorePage />} />
            <Route path="proposals" element={<ProposalsPage />} />
            <Route path="proposals/:id" element={<ProposalPage />} />
            <Route path="health" element={<HealthPage />} />
            <Route path="revisions/:revision" element={<RevisionPage />} />
            <Route path="compare" element={<ComparePage />} />
            <Route path="duplicates" element={<DuplicatesPage />} />
            <Route path="lab" element={<LabPage />} />
          </Route>
          <Route path="sessions" element={<SessionsPage />} />
          <Route path="sessions/:session" element={<ReplayPage />} />
        </Route>
        <Route path="*" element={<Navigate to="/" replace />} />
      </Routes>
    </AuthProvider>
  );
}
