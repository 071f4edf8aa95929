/**
 * One configuration's editor: lens, traits, Kinds, relations, depth, budget, search limit, the
 * optional pack sections and a query vector. Choices come from the schema the caller may read; an
 * empty field means "the default" (the lens's, else the server's).
 */

import { CloseButton, Group, MultiSelect, NumberInput, Paper, Select, Stack, TextInput } from "@mantine/core";
import { useState } from "react";
import type { SchemaNames } from "./api";
import { labelOf, parseVector, type LabConfig } from "./config";

const TRI = [
  { value: "", label: "default" },
  { value: "1", label: "on" },
  { value: "0", label: "off" },
];

function tri(value: boolean | null): string {
  return value === null ? "" : value ? "1" : "0";
}

function fromTri(value: string | null): boolean | null {
  return value === "1" ? true : value === "0" ? false : null;
}

function whole(value: number | string): number | null {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : null;
}

export function ConfigEditor(props: {
  index: number;
  config: LabConfig;
  names: SchemaNames | undefined;
  /** The members that changed (merged into the latest state by the page). */
  onChange: (change: Partial<LabConfig>) => void;
  onRemove?: () => void;
}) {
  const { index, config, names, onChange, onRemove } = props;
  const [vector, setVector] = useState(config.queryVector?.join(", ") ?? "");
  const parsed = parseVector(vector);
  const set = onChange;
  const withCurrent = (options: string[] | undefined, chosen: string[]) => [...new Set([...(options ?? []), ...chosen])];

  return (
    <Paper withBorder p="sm" data-testid={`lab-config-${index}`}>
      <Stack gap={6}>
        <Group justify="space-between" wrap="nowrap">
          <TextInput
            size="xs"
            aria-label={`Configuration ${labelOf(config, index)} label`}
            placeholder={labelOf(config, index)}
            value={config.label}
            onChange={(e) => set({ label: e.currentTarget.value })}
          />
          {onRemove && <CloseButton aria-label={`Remove configuration ${labelOf(config, index)}`} onClick={onRemove} />}
        </Group>
        <Select
          size="xs"
          label="Lens"
          placeholder="none"
          clearable
          data={withCurrent(names?.lenses, config.lens ? [config.lens] : [])}
          value={config.lens || null}
          onChange={(value) => set({ lens: value ?? "" })}
        />
        <MultiSelect
          size="xs"
          label="Traits"
          placeholder="none"
          data={withCurrent(names?.traits, config.traits)}
          value={config.traits}
          onChange={(traits) => set({ traits })}
        />
        <MultiSelect
          size="xs"
          label="Kinds (search, resolve)"
          placeholder="all"
          data={withCurrent(names?.kinds, config.kinds)}
          value={config.kinds}
          onChange={(kinds) => set({ kinds })}
        />
        <MultiSelect
          size="xs"
          label="Relations (pack)"
          placeholder="all, or the lens's"
          data={withCurrent(names?.relations, config.relations)}
          value={config.relations}
          onChange={(relations) => set({ relations })}
        />
        <Group grow gap={6}>
          <NumberInput
            size="xs"
            label="Depth"
            placeholder="default"
            min={0}
            max={100}
            value={config.depth ?? ""}
            onChange={(value) => set({ depth: whole(value) })}
          />
          <NumberInput
            size="xs"
            label="Budget (tokens)"
            placeholder="default"
            min={0}
            value={config.budgetTokens ?? ""}
            onChange={(value) => set({ budgetTokens: whole(value) })}
          />
          <NumberInput
            size="xs"
            label="Search limit"
            description="also the pack's seeds"
            placeholder="default"
            min={1}
            value={config.limit ?? ""}
            onChange={(value) => set({ limit: whole(value) })}
          />
        </Group>
        <Group grow gap={6}>
          <Select size="xs" label="Schema" data={TRI} value={tri(config.includeSchema)} onChange={(v) => set({ includeSchema: fromTri(v) })} />
          <Select size="xs" label="Changes" data={TRI} value={tri(config.includeRecentChanges)} onChange={(v) => set({ includeRecentChanges: fromTri(v) })} />
          <Select size="xs" label="Lineage" data={TRI} value={tri(config.includeLineage)} onChange={(v) => set({ includeLineage: fromTri(v) })} />
        </Group>
        <TextInput
          size="xs"
          label="Query vector"
          placeholder="none (numbers, comma-separated)"
          value={vector}
          error={typeof parsed === "string" ? parsed : undefined}
          onChange={(e) => {
            const text = e.currentTarget.value;
            setVector(text);
            const numbers = parseVector(text);
            if (typeof numbers !== "string") set({ queryVector: numbers });
          }}
        />
      </Stack>
    </Paper>
  );
}
