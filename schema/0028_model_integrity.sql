-- The model registry's integrity (issue 34).
--
-- Aliases get an identity. A credential scoped to an alias stores the id of the alias it was made for
-- (scope member "alias_id"), never only its name: a name is a string any version can take once the alias is
-- deleted (a label, or a new alias of the same name), an id belongs to one alias row. A deleted alias leaves
-- its credentials reading nothing; an alias made again under the same name is another alias.
ALTER TABLE model_aliases ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE model_aliases ADD CONSTRAINT model_aliases_id_key UNIQUE (id);

-- Alias-scoped credentials made before: bound to the alias their name names now. Those whose alias no
-- longer exists get id 0, which names no alias: they read nothing.
UPDATE access_keys k SET scope = k.scope || jsonb_build_object('alias_id', coalesce(
    (SELECT a.id FROM model_aliases a JOIN models m ON m.id = a.model_id JOIN teams t ON t.id = m.team_id
      WHERE t.name || '/' || m.name = k.scope->>'model' AND a.name = k.scope->>'alias'), 0))
 WHERE k.scope ? 'alias' AND NOT k.scope ? 'alias_id';
UPDATE api_tokens k SET scope = k.scope || jsonb_build_object('alias_id', coalesce(
    (SELECT a.id FROM model_aliases a JOIN models m ON m.id = a.model_id JOIN teams t ON t.id = m.team_id
      WHERE t.name || '/' || m.name = k.scope->>'model' AND a.name = k.scope->>'alias'), 0))
 WHERE k.scope ? 'alias' AND NOT k.scope ? 'alias_id';

-- Four-eyes: who may not approve a version. 'author_and_submitter' (the default): neither the user who
-- created the version nor anyone who submitted it. 'all_contributors': nor anyone who wrote one of its files
-- (the owners of the object versions frozen into it, model_versions.contributors). Team default, and a
-- per-model override (NULL = the team's).
ALTER TABLE teams ADD COLUMN four_eyes text NOT NULL DEFAULT 'author_and_submitter'
    CHECK (four_eyes IN ('author_and_submitter', 'all_contributors'));
ALTER TABLE models ADD COLUMN four_eyes text
    CHECK (four_eyes IN ('author_and_submitter', 'all_contributors'));
-- The users who wrote the files a version froze (distinct owners of the object versions), recorded with
-- the freeze. Versions made before this migration record none.
ALTER TABLE model_versions ADD COLUMN contributors text[] NOT NULL DEFAULT '{}';
