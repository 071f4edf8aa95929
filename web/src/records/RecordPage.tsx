/**
 * One Record: its values with their lineage (who, when, origin, message), its history as a
 * timeline with before/after, the explanation, its Links, and the context pack an agent asking
 * about it would get. Every read takes the page's branch and `at` (the context pack is read at the
 * head: the API's context call has no `at`).
 */
import { Anchor, Badge, Group, Paper, Stack, Tabs, Text, Title } from "@mantine/core";
import { Link, useParams } from "react-router";
import { getRecord } from "../api/records";
import { ProblemAlert } from "../shell/ProblemAlert";
import { shortRevision } from "../shell/format";
import { domainPath, useReadPoint } from "../shell/readPoint";
import { useApi } from "../shell/useApi";
import { ContextTab } from "./record/ContextTab";
import { ExplainTab } from "./record/ExplainTab";
import { HistoryTab } from "./record/HistoryTab";
import { LinksTab } from "./record/LinksTab";
import { ValuesTab } from "./record/ValuesTab";
import { usePageTitle } from "../shell/title";
import { useDomain } from "../shell/DomainLayout";
import { ProposalBanner } from "./ProposalBanner";

export function RecordPage() {
  const { domain, branch, at } = useReadPoint();
  const { kind = "", key = "" } = useParams();
  usePageTitle(`${kind}/${key}`, domain);
  const point = { branch, at };
  const { branchName } = useDomain();
  const record = useApi(() => getRecord(domain, kind, key, point), [domain, kind, key, branch, at]);

  return (
    <Stack gap="md" data-testid="record-page">
      <Paper withBorder p="md">
        <Group justify="space-between">
          <div>
            <Text size="sm" c="dimmed" ff="monospace">
              {kind}/{key}
            </Text>
            <Title order={2} size="h3" data-testid="record-title">
              {record.data?.title ?? key}
            </Title>
          </div>
          {record.data && (
            <Stack gap={2} align="flex-end">
              <Group gap="xs">
                <Anchor
                  component={Link}
                  size="sm"
                  to={domainPath(domain, `records/${encodeURIComponent(kind)}/${encodeURIComponent(key)}/neighbourhood`, point)}
                  data-testid="explore-link"
                >
                  Explore the neighbourhood
                </Anchor>
                <Badge variant="light">{record.data.kind}</Badge>
              </Group>
              <Text size="xs" c="dimmed">
                read at {shortRevision(record.data.revision)} on {record.data.branch}; last changed in{" "}
                {shortRevision(record.data.updated_revision)}
              </Text>
            </Stack>
          )}
        </Group>
      </Paper>
      <ProblemAlert error={record.error} />
      {record.data && !at && <ProposalBanner domain={domain} branch={branchName} kind={kind} recordRef={record.data.ref} />}
      {record.data && (
        <Tabs defaultValue="values" keepMounted={false}>
          <Tabs.List>
            <Tabs.Tab value="values">Values and lineage</Tabs.Tab>
            <Tabs.Tab value="history">History</Tabs.Tab>
            <Tabs.Tab value="explain">Explain</Tabs.Tab>
            <Tabs.Tab value="links">Links</Tabs.Tab>
            <Tabs.Tab value="context">Context pack</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="values" pt="md">
            <ValuesTab domain={domain} kind={kind} recordKey={key} point={point} record={record.data} />
          </Tabs.Panel>
          <Tabs.Panel value="history" pt="md">
            <HistoryTab domain={domain} kind={kind} recordKey={key} point={point} />
          </Tabs.Panel>
          <Tabs.Panel value="explain" pt="md">
            <ExplainTab domain={domain} kind={kind} recordKey={key} point={point} />
          </Tabs.Panel>
          <Tabs.Panel value="links" pt="md">
            <LinksTab domain={domain} kind={kind} recordKey={key} point={point} record={record.data} />
          </Tabs.Panel>
          <Tabs.Panel value="context" pt="md">
            <ContextTab domain={domain} recordRef={record.data.ref} point={point} />
          </Tabs.Panel>
        </Tabs>
      )}
    </Stack>
  );
}
