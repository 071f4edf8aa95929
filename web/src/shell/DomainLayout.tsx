/**
 * Every Domain page's frame: the Domain's name, the tabs to its screens, and the read point pickers
 * (branch from the Domain's branches; `at` as free text: a Revision id now, a tag later; the API
 * says when it does not know it).
 */
import { Group, Loader, Select, Stack, Tabs, TextInput, Title } from "@mantine/core";
import { Suspense, createContext, useContext, useEffect, useState } from "react";
import { Outlet, useLocation, useNavigate } from "react-router";
import { listBranches } from "../api/domain";
import type { Branch } from "../api/types";
import { rememberDomain } from "./lastDomain";
import { domainPath, useReadPoint } from "./readPoint";
import { useApi } from "./useApi";

const TABS = [
  { value: "overview", label: "Overview" },
  { value: "records", label: "Records" },
  { value: "proposals", label: "Proposals" },
  { value: "compare", label: "Compare" },
  { value: "duplicates", label: "Duplicates" },
  { value: "health", label: "Health" },
  { value: "lab", label: "Retrieval lab" },
];

interface DomainInfo {
  branches: Branch[];
  /** The Domain's default branch ("" until the branches are read, or when they cannot be). */
  defaultBranch: string;
  /** The branch the page reads: the picked one, else the default. */
  branchName: string;
  reloadBranches: () => void;
}

const DomainContext = createContext<DomainInfo>({ branches: [], defaultBranch: "", branchName: "", reloadBranches: () => {} });

/** The Domain's branches and the branch the page reads (inside a Domain page). */
export const useDomain = (): DomainInfo => useContext(DomainContext);

function currentTab(pathname: string, domain: string): string {
  const prefix = `/d/${encodeURIComponent(domain)}`;
  const rest = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : pathname;
  return rest.split("/").filter(Boolean)[0] ?? "overview";
}

export function DomainLayout() {
  const { domain, branch, at, setReadPoint } = useReadPoint();
  const location = useLocation();
  const navigate = useNavigate();
  const branches = useApi(() => listBranches(domain), [domain]);
  const [atText, setAtText] = useState(at);

  useEffect(() => rememberDomain(domain), [domain]);
  useEffect(() => setAtText(at), [at]);

  const tab = currentTab(location.pathname, domain);
  const names = branches.data?.branches.map((b) => b.name) ?? [];
  const defaultBranch = branches.data?.branches.find((b) => b.default)?.name ?? "";
  const options = branch && !names.includes(branch) ? [branch, ...names] : names;

  return (
    <Stack gap="sm">
      <Group justify="space-between" align="flex-end">
        <Title order={1} size="h2" data-testid="domain-title">
          {domain}
        </Title>
        <Group gap="xs" align="flex-end">
          <Select
            label="Branch"
            size="xs"
            w={220}
            data={options}
            value={branch || defaultBranch || null}
            placeholder="default branch"
            onChange={(value) => setReadPoint({ branch: value === defaultBranch ? "" : (value ?? "") })}
            searchable
            aria-label="Branch"
            data-testid="branch-picker"
          />
          <TextInput
            label="At (Revision)"
            size="xs"
            w={220}
            placeholder="head"
            value={atText}
            onChange={(e) => setAtText(e.currentTarget.value)}
            onBlur={() => atText !== at && setReadPoint({ at: atText.trim() })}
            onKeyDown={(e) => e.key === "Enter" && setReadPoint({ at: atText.trim() })}
            aria-label="At Revision"
            data-testid="at-picker"
          />
        </Group>
      </Group>
      <Tabs value={tab} onChange={(value) => navigate(domainPath(domain, value === "overview" ? "" : (value ?? ""), { branch, at }))}>
        <Tabs.List>
          {TABS.map((t) => (
            <Tabs.Tab key={t.value} value={t.value}>
              {t.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
      </Tabs>
      <DomainContext.Provider
        value={{
          branches: branches.data?.branches ?? [],
          defaultBranch,
          branchName: branch || defaultBranch,
          reloadBranches: branches.reload,
        }}
      >
        <Suspense fallback={<Loader m="xl" aria-label="Loading the page" />}>
          <Outlet />
        </Suspense>
      </DomainContext.Provider>
    </Stack>
  );
}
