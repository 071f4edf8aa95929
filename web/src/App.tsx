/**
 * The app's routes (all under the Vite base /app/) inside the shell. Every Domain page carries the
 * read point in its query string (`?branch=&at=`); the shell's pickers edit it.
 */
import { Navigate, Route, Routes } from "react-router";
import { DomainsPage } from "./domains/DomainsPage";
import { HealthPage } from "./health/HealthPage";
import { LabPage } from "./lab";
import { OverviewPage } from "./overview/OverviewPage";
import { ProposalPage } from "./proposals/ProposalPage";
import { ProposalsPage } from "./proposals/ProposalsPage";
import { RecordPage } from "./records/RecordPage";
import { RecordsPage } from "./records/RecordsPage";
import { ReplayPage, SessionsPage } from "./replay";
import { AuthProvider, RequireSession } from "./shell/auth";
import { DomainLayout } from "./shell/DomainLayout";
import { Shell } from "./shell/Shell";
import { SignInPage } from "./signin/SignInPage";

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
            <Route path="proposals" element={<ProposalsPage />} />
            <Route path="proposals/:id" element={<ProposalPage />} />
            <Route path="health" element={<HealthPage />} />
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
