/**
 * Skills: what a vehicle or its driver can do ("refrigerated", "tail-lift",
 * "adr") and what a delivery requires. Names are compared case-insensitively,
 * so they are kept lower-case with single spaces; a comma separates them in
 * an upload cell, so a name holds none.
 */

/** At most this many skills on one vehicle, driver or delivery. */
export const MAX_SKILLS_PER_RECORD = 20;
/** The solver keeps the skills of one plan as bits: at most this many distinct ones among its deliveries. */
export const MAX_SKILLS_PER_PLAN = 31;
export const SKILL_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N} _./+-]{0,39}$/u;

/** The stored form of a skill name. */
export const normaliseSkill = (name: string) => name.trim().toLowerCase().replace(/\s+/g, " ");

/** Distinct skill names in their stored form, in the order given. */
export const skillSet = (names: readonly string[]) => [...new Set(names.map(normaliseSkill).filter(Boolean))];

/** An upload cell such as `refrigerated, tail-lift` (commas or semicolons). */
export const parseSkillList = (cell: string) => skillSet(cell.split(/[,;]/));

/** The skills of `required` that `has` lacks. */
export const missingSkills = (required: readonly string[], has: readonly string[]) => required.filter((s) => !has.includes(s));
