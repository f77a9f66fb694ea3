-- Full-text index for GET /searchaddress: an external-content FTS5 table over
-- `addresses` (the text lives only in `addresses`; the index holds tokens),
-- kept in sync by triggers. `remove_diacritics 2` folds umlauts and accents
-- ("Muller" matches "Müller"). Searches join back on rowid = addresses.id and
-- filter by company_id there.
CREATE VIRTUAL TABLE `addresses_fts` USING fts5(
	contactcompany,
	contactlastname,
	contactfirstname,
	postalcode,
	city,
	content = 'addresses',
	content_rowid = 'id',
	tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `addresses_fts_after_insert` AFTER INSERT ON `addresses` BEGIN
	INSERT INTO addresses_fts (rowid, contactcompany, contactlastname, contactfirstname, postalcode, city)
	VALUES (new.id, new.contactcompany, new.contactlastname, new.contactfirstname, new.postalcode, new.city);
END;
--> statement-breakpoint
CREATE TRIGGER `addresses_fts_after_delete` AFTER DELETE ON `addresses` BEGIN
	INSERT INTO addresses_fts (addresses_fts, rowid, contactcompany, contactlastname, contactfirstname, postalcode, city)
	VALUES ('delete', old.id, old.contactcompany, old.contactlastname, old.contactfirstname, old.postalcode, old.city);
END;
--> statement-breakpoint
-- Only changes of indexed columns touch the index (a new coordinate does not);
-- the 'delete' command needs exactly the values indexed before, which is what `old` holds.
CREATE TRIGGER `addresses_fts_after_update` AFTER UPDATE OF id, contactcompany, contactlastname, contactfirstname, postalcode, city ON `addresses` BEGIN
	INSERT INTO addresses_fts (addresses_fts, rowid, contactcompany, contactlastname, contactfirstname, postalcode, city)
	VALUES ('delete', old.id, old.contactcompany, old.contactlastname, old.contactfirstname, old.postalcode, old.city);
	INSERT INTO addresses_fts (rowid, contactcompany, contactlastname, contactfirstname, postalcode, city)
	VALUES (new.id, new.contactcompany, new.contactlastname, new.contactfirstname, new.postalcode, new.city);
END;
--> statement-breakpoint
-- Addresses stored before this migration (e.g. company depots).
INSERT INTO addresses_fts (addresses_fts) VALUES ('rebuild');
