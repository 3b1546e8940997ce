import { memo, type ReactNode } from 'react';
import { Box, Text } from 'ink';
import type { FleetSnapshotSummary } from '../core/task/events.js';
import { sandboxNotice } from '../core/report/sandbox-notice.js';
import { holdText } from '../core/budget/rate-limits.js';
import { reviewWords } from '../core/task/review-load.js';
import type { SandboxCause } from '../domain/sandbox-cause.js';
import { costFigures, totalTokens, type FleetGates, type TaskStatus } from '../domain/types.js';
import { againstLimit, formatDuration, formatLimitDuration, formatTokens, formatUsd, meter, width } from './format.js';
import { Styled } from './styled-text.js';
import { FLEET_STATE_LABEL, ratioColor, STATUS_COLOR, STATUS_ORDER, STATUS_SYMBOL } from './theme.js';

export interface FleetBarProps {
  repo: string;
  base: string;
  state: FleetSnapshotSummary['state'];
  stoppedBy: FleetSnapshotSummary['stoppedBy'];
  /** the fleet holds for a usage or rate limit: shown instead of the bare state */
  hold?: FleetSnapshotSummary['hold'];
  /** `review_capacity:` set: the load against it; while it holds tasks back the state says `waiting for review: 2 of 2` */
  review?: FleetSnapshotSummary['review'];
  /** epoch ms, for "resumes in 2m" */
  now?: number;
  counts: Record<TaskStatus, number>;
  tokens: number;
  costUsd: number;
  elapsedMs: number;
  gates: FleetGates;
  sandboxed: boolean;
  /** the `sandbox:` setting, which decides what the warning says */
  sandbox?: 'auto' | 'off';
  /** what stops bubblewrap on this host, named in the warning with its fix */
  sandboxCause?: SandboxCause | null;
  columns: number;
  /** lines available; the bar drops its lower lines first, except the sandbox warning, which comes second */
  rows: number;
}

/** Lines the fleet bar wants: state and counts, usage against the fleet gates, and the sandbox warning. */
export function fleetBarLines(sandboxed: boolean): number {
  return sandboxed ? 2 : 3;
}

function Gauge({
  label,
  value,
  limit,
  text,
}: {
  label: string;
  value: number;
  limit: number | null;
  text: string;
}): ReactNode {
  return (
    <>
      <Styled dim>{label} </Styled>
      <Text>{text}</Text>
      {limit !== null && limit > 0 && (
        <>
          <Text> </Text>
          <Styled color={ratioColor(value / limit)}>{meter(value / limit)}</Styled>
        </>
      )}
      <Text>{'   '}</Text>
    </>
  );
}

export const FleetBar = memo(function FleetBar(props: FleetBarProps): ReactNode {
  const { repo, base, state, stoppedBy, counts, tokens, costUsd, elapsedMs, gates, sandboxed, columns, rows } = props;
  if (rows <= 0) return null;
  const label = FLEET_STATE_LABEL[state];
  const bare = props.hold === undefined ? state : holdText(props.hold, props.now ?? Date.now());
  const stateText = props.review?.held === true ? `${bare} · ${reviewWords(props.review)}` : bare;
  const shown = STATUS_ORDER.filter((s) => counts[s] > 0 || s === 'running' || s === 'queued');
  const head = `loopfleet ${repo} → ${base}  ${label.symbol} ${stateText}${stoppedBy === null ? '' : ` (stopped by the ${stoppedBy} gate)`}  `;
  // Narrower and narrower forms until the counts fit: `▶ 2 running  `, `▶2 running `, `▶2 `.
  const forms = [
    shown.map((s) => `${STATUS_SYMBOL[s]} ${counts[s]} ${s}  `),
    shown.map((s) => `${STATUS_SYMBOL[s]}${counts[s]} ${s} `),
    shown.map((s) => `${STATUS_SYMBOL[s]}${counts[s]} `),
  ];
  const perVerified = costFigures(costUsd, counts.verified + counts.merged, counts.merged).costPerVerified;
  const countText = forms.find((f) => width(head + f.join('')) < columns) ?? forms[2] ?? [];
  const warning = !sandboxed && (
    <Styled key="sandbox" color="red" bold wrap="truncate-end">
      ⚠ {sandboxNotice(props.sandbox ?? 'auto', false, props.sandboxCause ?? null)}
    </Styled>
  );
  const lines = [
    <Styled key="state" wrap="truncate-end">
      <Styled bold>loopfleet</Styled>
      <Text>{` ${repo} → ${base}  `}</Text>
      <Styled color={label.color} bold>{`${label.symbol} ${stateText}`}</Styled>
      {stoppedBy !== null && <Styled color="red">{` (stopped by the ${stoppedBy} gate)`}</Styled>}
      <Text>{'  '}</Text>
      {shown.map((s, i) => (
        <Styled key={s} color={STATUS_COLOR[s]}>
          {countText[i]}
        </Styled>
      ))}
    </Styled>,
    ...(warning ? [warning] : []),
    <Text key="usage" wrap="truncate-end">
      <Gauge
        label="tokens"
        value={tokens}
        limit={gates.tokens}
        text={againstLimit(tokens, gates.tokens, formatTokens)}
      />
      <Gauge
        label="cost"
        value={costUsd}
        limit={gates.costUsd}
        text={againstLimit(costUsd, gates.costUsd, formatUsd)}
      />
      {perVerified !== null && (
        <Gauge label="per verified" value={perVerified} limit={null} text={formatUsd(perVerified)} />
      )}
      <Gauge
        label="time"
        value={elapsedMs}
        limit={gates.timeMs}
        text={
          gates.timeMs === null
            ? formatDuration(elapsedMs)
            : `${formatDuration(elapsedMs)}/${formatLimitDuration(gates.timeMs)}`
        }
      />
    </Text>,
  ];
  return <Box flexDirection="column">{lines.slice(0, rows)}</Box>;
});

export function fleetTokens(totals: FleetSnapshotSummary['totals']): number {
  return totalTokens(totals.usage);
}
