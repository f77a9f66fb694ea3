CREATE TABLE `addresses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`contactcompany` text,
	`customernr` text,
	`contactfirstname` text,
	`contactlastname` text,
	`street` text,
	`housenumber` text,
	`postalcode` text,
	`city` text,
	`district` text,
	`country` text,
	`email` text,
	`phonenr` text,
	`lng` real,
	`lat` real,
	`addresstype` text,
	`geocode_source` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `addresses_company_lat` ON `addresses` (`company_id`,`lat`);--> statement-breakpoint
CREATE INDEX `addresses_company_postalcode` ON `addresses` (`company_id`,`postalcode`);--> statement-breakpoint
CREATE TABLE `companies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`slug` text NOT NULL,
	`companyname` text NOT NULL,
	`location_id` integer,
	`pricing_package` integer DEFAULT 0 NOT NULL,
	`test_phase` integer DEFAULT false NOT NULL,
	`timezone` text DEFAULT 'Europe/Berlin' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `companies_slug_unique` ON `companies` (`slug`);--> statement-breakpoint
CREATE TABLE `deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`deliveryissuename` text,
	`pdt_from` text,
	`pdt_to` text,
	`eta_from` text,
	`eta_to` text,
	`tdt_from` text,
	`tdt_to` text,
	`ddt_from` text,
	`ddt_to` text,
	`ata` text,
	`atd` text,
	`els` integer,
	`als` real,
	`tfp` integer,
	`creationtime` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`deliverprio` integer,
	`orderindex` integer,
	`load` integer,
	`notes` text,
	`custom_id` text,
	`custom_tour` text,
	`drivernotes` text,
	`final` integer,
	`vehicle` text,
	`scancode` text,
	`notify_customer` integer DEFAULT false NOT NULL,
	`deliverylocation_id` integer,
	`supplierlocation_id` integer,
	`route_id` integer,
	`status` integer DEFAULT 0 NOT NULL,
	`code` integer,
	`distances` text,
	`deliverytype_id` integer,
	`waiting_time` integer,
	`pickup_ref_id` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`deliverylocation_id`) REFERENCES `addresses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`supplierlocation_id`) REFERENCES `addresses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`route_id`) REFERENCES `routes`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `deliveries_company_status` ON `deliveries` (`company_id`,`status`);--> statement-breakpoint
CREATE INDEX `deliveries_company_route` ON `deliveries` (`company_id`,`route_id`,`orderindex`);--> statement-breakpoint
CREATE INDEX `deliveries_company_pdt` ON `deliveries` (`company_id`,`pdt_from`);--> statement-breakpoint
CREATE TABLE `driver_availabilities` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`driver_id` integer NOT NULL,
	`fromtime` text NOT NULL,
	`totime` text NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`driver_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `availabilities_driver_time` ON `driver_availabilities` (`company_id`,`driver_id`,`fromtime`);--> statement-breakpoint
CREATE TABLE `driver_tracking` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`driver_id` integer NOT NULL,
	`timestamp` text NOT NULL,
	`lng` real NOT NULL,
	`lat` real NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`driver_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `tracking_driver_time` ON `driver_tracking` (`company_id`,`driver_id`,`timestamp`);--> statement-breakpoint
CREATE TABLE `gazetteer_places` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`country` text NOT NULL,
	`postalcode` text NOT NULL,
	`place` text NOT NULL,
	`place_key` text NOT NULL,
	`lng` real NOT NULL,
	`lat` real NOT NULL,
	`source` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `gazetteer_country_postalcode` ON `gazetteer_places` (`country`,`postalcode`);--> statement-breakpoint
CREATE INDEX `gazetteer_country_place` ON `gazetteer_places` (`country`,`place_key`);--> statement-breakpoint
CREATE INDEX `gazetteer_lat` ON `gazetteer_places` (`lat`);--> statement-breakpoint
CREATE TABLE `geocode_cache` (
	`company_id` integer NOT NULL,
	`query_key` text NOT NULL,
	`lng` real,
	`lat` real,
	`result` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	PRIMARY KEY(`company_id`, `query_key`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`channel` text NOT NULL,
	`to` text NOT NULL,
	`subject` text,
	`body` text NOT NULL,
	`template` text NOT NULL,
	`data` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`sent_at` text,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `outbox_company_status` ON `outbox` (`company_id`,`status`);--> statement-breakpoint
CREATE TABLE `postal_areas` (
	`gid` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`plz` text NOT NULL,
	`note` text,
	`geom` text NOT NULL,
	`min_lng` real NOT NULL,
	`min_lat` real NOT NULL,
	`max_lng` real NOT NULL,
	`max_lat` real NOT NULL,
	`source` text DEFAULT 'derived' NOT NULL
);
--> statement-breakpoint
CREATE INDEX `postal_areas_plz` ON `postal_areas` (`plz`);--> statement-breakpoint
CREATE INDEX `postal_areas_bbox` ON `postal_areas` (`min_lng`,`max_lng`,`min_lat`,`max_lat`);--> statement-breakpoint
CREATE TABLE `processes` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`kind` text NOT NULL,
	`params` text,
	`created_by` integer,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `processes_company` ON `processes` (`company_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `routes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`process_id` text,
	`creationtime` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`ast` text,
	`tst_from` text,
	`tst_to` text,
	`pst` integer,
	`distance` integer DEFAULT 0 NOT NULL,
	`driver_id` integer,
	`gross_duration` integer DEFAULT 0 NOT NULL,
	`net_duration` integer DEFAULT 0 NOT NULL,
	`status` integer DEFAULT 0 NOT NULL,
	`custom_id` text,
	`previous_deliveries` text DEFAULT '[]' NOT NULL,
	`previous_drivers` text DEFAULT '[]' NOT NULL,
	`replaces` integer,
	`replaced_by` integer,
	`routebase_address_id` integer,
	`areatext` text,
	`htmlcolor` text,
	`routestring` text,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`driver_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`routebase_address_id`) REFERENCES `addresses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `routes_company_status` ON `routes` (`company_id`,`status`);--> statement-breakpoint
CREATE INDEX `routes_company_driver` ON `routes` (`company_id`,`driver_id`);--> statement-breakpoint
CREATE INDEX `routes_process` ON `routes` (`company_id`,`process_id`);--> statement-breakpoint
CREATE TABLE `tour_area_members` (
	`company_id` integer NOT NULL,
	`tourarea_id` integer NOT NULL,
	`postal_area_gid` integer NOT NULL,
	PRIMARY KEY(`tourarea_id`, `postal_area_gid`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tourarea_id`) REFERENCES `tour_areas`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`postal_area_gid`) REFERENCES `postal_areas`(`gid`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `tour_area_members_gid` ON `tour_area_members` (`company_id`,`postal_area_gid`);--> statement-breakpoint
CREATE TABLE `tour_areas` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`areaname` text,
	`driver_id` integer,
	`geom` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`driver_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `tour_areas_company` ON `tour_areas` (`company_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`usertype` text NOT NULL,
	`email` text NOT NULL,
	`password_hash` text,
	`firstname` text,
	`lastname` text,
	`expires` text,
	`active` integer DEFAULT false NOT NULL,
	`confirmed_at` text,
	`code_hash` text,
	`mobilenr` text,
	`htmlcolor` text,
	`vehicle` text,
	`status` integer,
	`imei` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_company_email` ON `users` (`company_id`,`email`);--> statement-breakpoint
CREATE INDEX `users_company_type` ON `users` (`company_id`,`usertype`);--> statement-breakpoint
CREATE INDEX `users_code` ON `users` (`company_id`,`code_hash`);--> statement-breakpoint
CREATE TABLE `vehicles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`company_id` integer NOT NULL,
	`name` text NOT NULL,
	`plate` text,
	`vehicle_class` text DEFAULT 'car' NOT NULL,
	`depot_location_id` integer,
	`driver_id` integer,
	`capacity_1` integer,
	`capacity_2` integer,
	`capacity_3` integer,
	`daily_rate` real,
	`km_rate` real,
	`waiting_hour_rate` real,
	`traveltime_factor` real,
	`departure_time_from` text,
	`departure_time_to` text,
	`return_time_to` text,
	`max_tour_duration` integer,
	`active` integer DEFAULT true NOT NULL,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`depot_location_id`) REFERENCES `addresses`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`driver_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `vehicles_company_name` ON `vehicles` (`company_id`,`name`);