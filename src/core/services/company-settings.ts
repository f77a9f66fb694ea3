import type { WorkingTimeRuleId } from "../../shared/contract/breaks";

/** The languages a company's messages and pages come in. */
export const LANGUAGES = ["de", "en"] as const;
export type Language = (typeof LANGUAGES)[number];

/** The settings the operator sets (and GET /company shows). */
export interface CompanySettings {
  /** IANA time zone: every time a person reads (messages, pages) is in this zone. */
  timezone: string;
  language: Language;
  /** A customer told an ETA hears again when it moves by more than this. */
  eta_update_minutes: number;
  /** A customer hears that the driver is close when this many stops lie before theirs (0: never). */
  notify_stops_before: number;
  position_retention_days: number;
  proof_retention_days: number;
  proof_on_tracking_page: boolean;
  /** Service minutes of a delivery without `els`, by `deliverytype_id`. */
  service_minutes_by_type: Partial<Record<string, number>>;
  /** Working-time rules of the vehicles that name none. */
  working_time_rules: WorkingTimeRuleId[];
}

const SETTING_KEYS = ["timezone", "language", "eta_update_minutes", "notify_stops_before", "position_retention_days", "proof_retention_days", "proof_on_tracking_page", "service_minutes_by_type", "working_time_rules"] as const;

/** The settings given in `input` (others left out), for a write. */
export const settingsOf = (input: Partial<CompanySettings>): Partial<CompanySettings> =>
  Object.fromEntries(SETTING_KEYS.flatMap((k) => (input[k] === undefined ? [] : [[k, input[k]]])));

/** The settings of a stored company, as the API shows them. */
export const storedSettings = (row: CompanySettings): CompanySettings => Object.fromEntries(SETTING_KEYS.map((k) => [k, row[k]])) as unknown as CompanySettings;
