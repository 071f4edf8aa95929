/** The context pack an agent asking about this Record gets (depth 1, the default budget): the
 * budget per section, the Records in it, and the whole pack as JSON. */
import { Anchor, Code, Group, List, Paper, Progress, Stack, Text } from "@mantine/core";
import { Link } from "react-router";
import { contextFor } from "../../api/records";
import { ProblemAlert } from "../../shell/ProblemAlert";
import { shortRevision, splitRef } from "../../shell/format";
import { recordPath, type ReadPoint } from "../../shell/readPoint";
import { useApi } from "../../shell/useApi";

export function ContextTab({ domain, recordRef, point }: { domain: string; recordRef: string; point: ReadPoint }) {
  const pack = useApi(() => contextFor(domain, recordRef, point), [domain, recordRef, point.branch]);
  const data = pack.data;
  const budget = data?.budget;
  return (
    <Stack gap="sm" data-testid="context-pack">
      <ProblemAlert error={pack.error} />
      {point.at && (
        <Text size="sm" c="dimmed">
          Context packs are built at the branch head (the API takes no `at` for them).
        </Text>
      )}
      {data && budget && (
        <>
          <Paper withBorder p="sm">
            <Group justify="space-between">
              <Text size="sm">
                {budget.used_tokens} of {budget.limit_tokens} tokens at {shortRevision(data.revision)}
                {budget.over_budget ? " (over budget)" : ""}
              </Text>
              <Text size="xs" c="dimmed">
                {Object.entries(budget.sections)
                  .map(([section, tokens]) => `${section} ${tokens}`)
                  .join(" · ")}
              </Text>
            </Group>
            <Progress mt={6} value={Math.min(100, (budget.used_tokens / Math.max(1, budget.limit_tokens)) * 100)} />
          </Paper>
          <Text size="sm" fw={600}>
            Records in the pack
          </Text>
          <List size="sm">
            {[...data.seeds.map((s) => ({ ...s, depth: 0 })), ...data.neighbors].map((r) => {
              const ref = splitRef(r.ref);
              return (
                <List.Item key={r.ref}>
                  {ref ? (
                    <Anchor component={Link} to={recordPath(domain, ref.kind, ref.key, point)} size="sm">
                      {r.ref}
                    </Anchor>
                  ) : (
                    r.ref
                  )}{" "}
                  {r.title ?? ""} {r.depth === 0 ? "(seed)" : `(depth ${r.depth})`}
                </List.Item>
              );
            })}
          </List>
          <Text size="sm" fw={600}>
            The pack
          </Text>
          <Code block style={{ maxHeight: 420, overflow: "auto" }}>
            {JSON.stringify(data, null, 2)}
          </Code>
        </>
      )}
    </Stack>
  );
}
