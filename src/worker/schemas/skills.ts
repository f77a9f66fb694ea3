/** Skills on the wire: written as a list of names, answered in their stored form (domain/skills.ts). */
import { z } from "@hono/zod-openapi";
import { MAX_SKILLS_PER_RECORD, SKILL_PATTERN, normaliseSkill, skillSet } from "../../core/domain/skills";

/** A list of skill names; stored lower-case, without repeats. */
export const SkillsInput = z
  .array(z.string().max(100).transform(normaliseSkill).pipe(z.string().regex(SKILL_PATTERN, "1 to 40 letters, digits, spaces or _ . / + -, starting with a letter or digit")))
  .max(MAX_SKILLS_PER_RECORD)
  .transform(skillSet)
  .openapi({ type: "array", maxItems: MAX_SKILLS_PER_RECORD, items: { type: "string", maxLength: 100 }, example: ["refrigerated", "tail-lift"], description: `At most ${MAX_SKILLS_PER_RECORD} names, compared case-insensitively (stored lower-case)` });

export const SkillsOutput = z.array(z.string()).openapi({ example: ["refrigerated", "tail-lift"] });
