/** A Proposal's Conflicts with its target: base, ours (the target) and theirs (the source), and a
 * form per open Conflict to resolve it with the resolutions it takes (`resolutions`: a schema
 * Conflict theirs only; a value that does not fit the schema none, it is changed on its branch). */
import { Badge, Button, Group, Paper, Radio, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useState } from "react";
import type { Resolution } from "../api/proposals";
import type { Conflict } from "../api/types";
import { formatValue } from "../shell/format";

interface Props {
  conflicts: Conflict[];
  onResolve: (conflict: Conflict, resolution: Resolution) => Promise<boolean>;
  readOnly: boolean;
}

/** A typed value as JSON when it parses (numbers, booleans, null, lists), else as the text. */
export function parseResolutionValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Choice = Conflict["resolutions"][number];

const LABELS: Record<Choice, string> = { ours: "ours (target)", theirs: "theirs (source)", value: "a value" };

function ResolveForm({ conflict, onResolve }: { conflict: Conflict; onResolve: Props["onResolve"] }) {
  const offered = conflict.resolutions;
  const [choice, setChoice] = useState<Choice>(offered.includes("theirs") ? "theirs" : (offered[0] ?? "ours"));
  const [value, setValue] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    try {
      await onResolve(conflict, choice === "value" ? { resolution: "value", value: parseResolutionValue(value) } : { resolution: choice });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Group gap="xs" align="flex-end" data-testid="resolve-form">
      <Radio.Group value={choice} onChange={(v) => setChoice(v as typeof choice)}>
        <Group gap="xs">
          {offered.map((one) => (
            <Radio key={one} value={one} label={LABELS[one]} />
          ))}
        </Group>
      </Radio.Group>
      {choice === "value" && <TextInput size="xs" value={value} onChange={(e) => setValue(e.currentTarget.value)} placeholder="value" />}
      <Button size="xs" onClick={submit} loading={busy}>
        Resolve
      </Button>
    </Group>
  );
}

export function ConflictsPanel({ conflicts, onResolve, readOnly }: Props) {
  return (
    <Paper withBorder p="sm" data-testid="conflicts">
      <Title order={5} mb="xs">
        Conflicts
      </Title>
      {conflicts.length === 0 && <Text size="sm" c="dimmed">No Conflicts recorded (a merge attempt records them).</Text>}
      <Stack gap="sm">
        {conflicts.map((c) => (
          <Paper key={c.id} withBorder p="xs">
            <Group justify="space-between" mb={4}>
              <Text size="sm" fw={600} ff="monospace">
                {c.ref}
                {c.attribute ? `.${c.attribute}` : ""}
              </Text>
              <Group gap={4}>
                <Badge size="sm" variant="light">
                  {c.code}
                </Badge>
                <Badge size="sm" color={c.status === "open" ? "red" : "green"}>
                  {c.status}
                </Badge>
              </Group>
            </Group>
            {c.redacted ? (
              <Text size="sm" c="dimmed">
                The values are hidden from you (sensitive Attribute).
              </Text>
            ) : (
              <Table fz="sm" withTableBorder>
                <Table.Tbody>
                  <Table.Tr>
                    <Table.Td w={140}>base</Table.Td>
                    <Table.Td>{formatValue(c.base)}</Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Td>ours (target)</Table.Td>
                    <Table.Td>{formatValue(c.ours)}</Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Td>theirs (source)</Table.Td>
                    <Table.Td>{formatValue(c.theirs)}</Table.Td>
                  </Table.Tr>
                </Table.Tbody>
              </Table>
            )}
            {c.status === "resolved" && c.resolution && (
              <Text size="xs" mt={4}>
                Resolved with {c.resolution.choice}
                {c.resolution.choice === "value" ? ` ${formatValue(c.resolution.value)}` : ""} by {c.resolved_by}
              </Text>
            )}
            {c.status === "open" && c.resolutions.length === 0 && (
              <Text size="xs" mt={4} data-testid="no-resolution">
                This Conflict takes no resolution: change the value on its branch (theirs says which and why), and
                the next merge attempt finds it no more.
              </Text>
            )}
            {c.status === "open" && !readOnly && c.resolutions.length > 0 && (
              <div style={{ marginTop: 6 }}>
                <ResolveForm conflict={c} onResolve={onResolve} />
              </div>
            )}
          </Paper>
        ))}
      </Stack>
    </Paper>
  );
}
