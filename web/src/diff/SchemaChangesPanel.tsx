/**
 * "Schema changes": what a range of Revisions changed in the schema, element by element (added,
 * removed, renamed, changed, with the members that differ, base against proposed), and, given a
 * target branch, where the target stands on each element and the preview of the migration there
 * (schemaChanges.ts). Shown on a Proposal, a Revision and a branch compare; nothing when the range
 * changed no schema. Every state is said in words (badges carry text), tables have headers, and
 * long values wrap so a phone never scrolls sideways.
 */
import { Alert, Badge, Group, List, Paper, Stack, Table, Text, Title } from "@mantine/core";
import { ApiProblem } from "../api/problem";
import type { SchemaChangeResult } from "../api/types";
import { ProblemAlert } from "../shell/ProblemAlert";
import { formatValue } from "../shell/format";
import { useApi } from "../shell/useApi";
import { loadSchemaChanges, verdict, type SchemaRange, type TargetView } from "./schemaChanges";
import { writesFor, writesText, type ElementDiff, type MemberDiff, type SchemaSection, type TargetStanding } from "./schemaDiff";

const SECTIONS: Array<[SchemaSection, string]> = [
  ["Kind", "Kinds"],
  ["Attribute", "Attributes"],
  ["Relation", "Relations"],
  ["Trait", "Traits"],
  ["Operation", "Operations"],
  ["lens", "Lenses"],
  ["Source", "Sources"],
];

// Dark shades under white text: 4.5:1 or more (WCAG AA); the badge's text says the change anyway.
const CHANGE_COLOR = { added: "#1e6f30", removed: "red.9", renamed: "blue.9", changed: "#a34200" } as const;

const STANDING: Record<TargetStanding, string> = {
  unchanged: "not changed there since the base",
  same: "changed there the same way (no Conflict)",
  apart: "changed there too, apart (one side its name, the other its definition: both hold)",
  conflict: "Conflict: changed there differently since the base; the merge will list it to resolve",
};

const WRAP = { overflowWrap: "anywhere", wordBreak: "break-word" } as const;

function text(value: unknown): string {
  if (value === undefined) return "—";
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value.length ? value.join(", ") : "(none)";
  return formatValue(value);
}

function MemberRow({ diff }: { diff: MemberDiff }) {
  const listed = diff.before !== undefined && diff.after !== undefined && (diff.added?.length ?? 0) + (diff.removed?.length ?? 0) > 0;
  return (
    <Table.Tr>
      <Table.Th scope="row" ff="monospace" fw={400}>
        {diff.member}
      </Table.Th>
      <Table.Td style={WRAP}>{text(diff.before)}</Table.Td>
      <Table.Td style={WRAP}>
        {text(diff.after)}
        {listed && (
          <Text size="xs" c="dimmed">
            {diff.added?.length ? `adds ${diff.added.join(", ")}` : ""}
            {diff.added?.length && diff.removed?.length ? "; " : ""}
            {diff.removed?.length ? `drops ${diff.removed.join(", ")}` : ""}
          </Text>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

function Element({ element, target }: { element: ElementDiff; target: TargetView | null }) {
  const standing = target?.standing.get(`${element.section}:${element.name}`);
  const writes = writesFor(element, target?.preview);
  return (
    <div data-testid="schema-element" data-change={element.change} data-element={element.name} data-standing={standing}>
      <Group gap="xs" wrap="wrap">
        <Badge size="sm" color={CHANGE_COLOR[element.change]}>
          {element.change}
        </Badge>
        <Text ff="monospace" size="sm" fw={600} style={WRAP}>
          {element.name}
        </Text>
        {element.was && (
          <Text size="sm" style={WRAP}>
            from <code>{element.was}</code>
          </Text>
        )}
      </Group>
      {target && standing && (
        <Text size="sm" data-testid="schema-standing" fw={standing === "conflict" ? 600 : undefined} c={standing === "conflict" ? "red.9" : undefined}>
          On {target.branch}: {STANDING[standing]}
        </Text>
      )}
      {writes !== undefined && (
        <Text size="sm" data-testid="schema-writes">
          Migration on {target?.branch}: {writesText(element, writes)}
          {target?.preview?.writes?.derived[element.name] ? `, ${target.preview.writes.derived[element.name]} derived values change` : ""}
        </Text>
      )}
      {element.members.length > 0 && (
        <Table fz="sm" mt={4} withTableBorder layout="fixed" data-testid="schema-members">
          <Table.Thead>
            <Table.Tr>
              <Table.Th w="28%">Member</Table.Th>
              <Table.Th>Base</Table.Th>
              <Table.Th>Proposed</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {element.members.map((m) => (
              <MemberRow key={m.member} diff={m} />
            ))}
          </Table.Tbody>
        </Table>
      )}
    </div>
  );
}

/** Why a dry run was not run or failed, in the reviewer's words. */
function PreviewProblem({ target, error }: { target: string; error: unknown }) {
  if (error instanceof ApiProblem && error.status === 403) {
    return (
      <Text size="sm" data-testid="schema-preview-denied">
        No preview: re-running the change sets as a dry run on {target} needs the <code>schema.change</code> permission there (the admin role holds it). The
        changes above are what the change sets' Revisions say.
      </Text>
    );
  }
  return <ProblemAlert error={error} title={`The change sets do not apply to ${target} as it is now`} />;
}

function Preview({ target, preview }: { target: string; preview: SchemaChangeResult }) {
  const counts = Object.entries(preview.writes?.counts ?? {});
  const derived = preview.writes?.derived ?? {};
  const touches = preview.touches;
  const touched: Array<[string, string[]]> = [
    ["Operations rewritten or reaching a removed element", touches.operations],
    ["Lenses rewritten or reaching a removed element", touches.lenses],
    ["Grants narrowed to a renamed or removed Kind", touches.grants],
    [`Webhooks that will see the Revision on ${target}`, touches.webhooks],
  ];
  return (
    <Stack gap="xs" data-testid="schema-preview">
      <Text size="sm" data-testid="schema-migrated">
        The migration would change {preview.migrated.records} Record{preview.migrated.records === 1 ? "" : "s"} and {preview.migrated.links} Link
        {preview.migrated.links === 1 ? "" : "s"} on {target}.
      </Text>
      {counts.length > 0 && (
        <Table fz="sm" withTableBorder data-testid="schema-writes-table">
          <Table.Caption>Values the migration writes (backfills, conversions, values cleared or dropped)</Table.Caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Attribute</Table.Th>
              <Table.Th>Values written</Table.Th>
              <Table.Th>Derived values changed</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {counts.map(([name, count]) => (
              <Table.Tr key={name}>
                <Table.Th scope="row" ff="monospace" fw={400} style={WRAP}>
                  {name}
                </Table.Th>
                <Table.Td>{count}</Table.Td>
                <Table.Td>{derived[name] ?? 0}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {preview.violation_count === 0 ? (
        <Text size="sm" data-testid="schema-violations">
          No Record or Link would violate the new schema.
        </Text>
      ) : (
        <div data-testid="schema-violations">
          <Text size="sm" fw={600} c="red.9">
            {preview.violation_count} Record{preview.violation_count === 1 ? "" : "s"} or Links would violate the new schema: the change set would be refused as a
            whole.
          </Text>
          <Table fz="sm" withTableBorder layout="fixed">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Record or Link</Table.Th>
                <Table.Th>Rule</Table.Th>
                <Table.Th>Why</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {preview.violations.slice(0, 20).map((v, i) => (
                <Table.Tr key={i}>
                  <Table.Td ff="monospace" style={WRAP}>
                    {v.record ?? v.link ?? v.path}
                  </Table.Td>
                  <Table.Td style={WRAP}>{v.rule}</Table.Td>
                  <Table.Td style={WRAP}>{v.message}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {preview.violation_count > 20 && <Text size="xs">and {preview.violation_count - 20} more</Text>}
        </div>
      )}
      <List size="sm" data-testid="schema-touches">
        {touched.map(([label, names]) => (
          <List.Item key={label} style={WRAP}>
            {label}: {names.length ? names.join(", ") : "none"}
          </List.Item>
        ))}
      </List>
    </Stack>
  );
}

export function SchemaChangesPanel({ domain, range, target }: { domain: string; range: SchemaRange | null; target?: string }) {
  const found = useApi(range ? () => loadSchemaChanges(domain, range, target) : null, [domain, range?.branch, range?.from, range?.to, target]);
  const view = found.data;
  if (!range || (!found.loading && !found.error && !view)) return null;
  const reasons = view?.target ? verdict(view.target) : [];
  return (
    <Paper withBorder p="sm" data-testid="schema-changes">
      <Title order={3} size="h5" mb="xs">
        Schema changes
      </Title>
      <ProblemAlert error={found.error} title="The schema changes cannot be read" />
      {found.loading && <Text size="sm" c="dimmed">Reading the schema changes…</Text>}
      {view && (
        <Stack gap="sm">
          <Text size="xs" c="dimmed" style={WRAP}>
            Base schema {view.before.schema_version?.slice(0, 12)} → proposed {view.after.schema_version?.slice(0, 12)}, {view.changes.length} change
            {view.changes.length === 1 ? "" : "s"} in the change sets
          </Text>
          {view.target && !view.target.alreadyThere && (
            <Alert
              color={reasons.length ? "yellow" : "green"}
              title={reasons.length ? `Check before merging into ${view.target.branch}` : `The schema change merges cleanly into ${view.target.branch}`}
              data-testid="schema-verdict"
              data-safe={reasons.length ? "no" : "yes"}
            >
              {reasons.length ? (
                <List size="sm">
                  {reasons.map((r) => (
                    <List.Item key={r}>{r}</List.Item>
                  ))}
                </List>
              ) : (
                <Text size="sm">No element changed on both sides, and no Record or Link would violate the new schema.</Text>
              )}
            </Alert>
          )}
          {view.target?.alreadyThere && <Text size="sm">{view.target.branch} already stands on the proposed schema.</Text>}
          {view.unkept > 0 && (
            <Text size="sm">
              {view.unkept} Revision{view.unkept === 1 ? "" : "s"} changed the schema without a kept change set (a merge, or one made before migration 0019): a
              rename there shows as a removal and an addition, and there is no preview.
            </Text>
          )}
          {SECTIONS.map(([section, heading]) => {
            const elements = view.elements.filter((e) => e.section === section);
            if (elements.length === 0) return null;
            return (
              <section key={section} aria-label={heading}>
                <Title order={4} size="h6" mb={4}>
                  {heading}
                </Title>
                <Stack gap="sm">
                  {elements.map((e) => (
                    <Element key={`${e.change}:${e.name}`} element={e} target={view.target} />
                  ))}
                </Stack>
              </section>
            );
          })}
          {view.target && !view.target.alreadyThere && (
            <section aria-label={`Migration preview on ${view.target.branch}`}>
              <Title order={4} size="h6" mb={4}>
                Migration preview on {view.target.branch}
              </Title>
              {view.target.preview && <Preview target={view.target.branch} preview={view.target.preview} />}
              {view.target.previewError !== null && <PreviewProblem target={view.target.branch} error={view.target.previewError} />}
              {!view.target.preview && view.target.previewError === null && (
                <Text size="sm">
                  {view.withheld
                    ? "No preview: a change's backfill or map holds values you are not cleared for, so it cannot be re-run with your view of it."
                    : "No preview: a Revision's change set is not kept (above)."}
                </Text>
              )}
            </section>
          )}
        </Stack>
      )}
    </Paper>
  );
}
