CREATE TABLE `company_directory` (
	`company_id` integer PRIMARY KEY NOT NULL,
	`slug` text NOT NULL,
	`shard` integer DEFAULT 0 NOT NULL,
	`read_only` integer DEFAULT false NOT NULL,
	`move` text,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `company_directory_slug_unique` ON `company_directory` (`slug`);--> statement-breakpoint
CREATE INDEX `company_directory_shard` ON `company_directory` (`shard`);--> statement-breakpoint
CREATE TABLE `shard_blocks` (
	`shard` integer PRIMARY KEY NOT NULL,
	`block` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shard_blocks_block_unique` ON `shard_blocks` (`block`);--> statement-breakpoint
-- Hand-written backfill: every existing company lives on the first database (on the other shards, empty before their first company, this inserts nothing).
INSERT INTO `company_directory` (`company_id`, `slug`, `shard`) SELECT `id`, `slug`, 0 FROM `companies`;