/** A delivery's required skills as small tags, the same in the console and the driver app. */
export function SkillTags({ skills, label = "Needs" }: { skills: readonly string[] | undefined; label?: string }) {
  if (!skills?.length) return null;
  return (
    <span class="skills" aria-label={`${label}: ${skills.join(", ")}`}>
      {skills.map((s) => (
        <span key={s} class="skill">
          {s}
        </span>
      ))}
    </span>
  );
}
